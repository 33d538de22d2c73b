/* A minimal ALSA sequencer client for the VM test (Tests/VM/README.md).
 *
 *   seqtool --direct|--subscribe DEST HOLD_SECONDS KEY...
 *   seqtool --receive COUNT
 *
 * Sending: opens the sequencer as "vm-sender-direct" or "vm-sender-subscribed", sends a note-on
 * (channel 1, velocity 100) for each KEY to DEST ("ToneShaper", "128:0", ...), holds them for
 * HOLD_SECONDS and exits without a note-off, the way a crashing program would.
 *   --direct     addresses each event to DEST's port (snd_seq_ev_set_dest), no subscription:
 *                only a client-exit announcement (System:Announce) tells DEST that we left.
 *   --subscribe  subscribes our port to DEST first (as aconnect does) and sends to subscribers:
 *                DEST sees the subscription go away when we exit.
 * Prints "seqtool: CLIENT:PORT on KEYS at EPOCH" once the notes are out and "seqtool: exiting at
 * EPOCH" last (CLOCK_REALTIME seconds, as `date +%s.%N` prints them).
 *
 * Receiving: a client "vm-receiver" with one writable port; prints the CLOCK_MONOTONIC arrival
 * time of each of the first COUNT note-ons, one a line, then exits. It measures what the
 * sequencer itself delivers (aplaymidi's timing), the floor for the instrument's jitter.
 */
#include <alsa/asoundlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double seconds(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int receive(int count) {
    snd_seq_t *seq;
    int err = snd_seq_open(&seq, "default", SND_SEQ_OPEN_INPUT, 0);
    if (err < 0) { fprintf(stderr, "seqtool: cannot open the sequencer: %s\n", snd_strerror(err)); return 1; }
    snd_seq_set_client_name(seq, "vm-receiver");
    int port = snd_seq_create_simple_port(seq, "in", SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE,
                                          SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION);
    if (port < 0) { fprintf(stderr, "seqtool: cannot create a port: %s\n", snd_strerror(port)); return 1; }
    printf("seqtool: receiving as %d:%d\n", snd_seq_client_id(seq), port);
    fflush(stdout);
    for (int got = 0; got < count;) {
        snd_seq_event_t *ev;
        if (snd_seq_event_input(seq, &ev) < 0) continue;
        if (ev->type == SND_SEQ_EVENT_NOTEON && ev->data.note.velocity > 0) {
            printf("%.9f\n", seconds(CLOCK_MONOTONIC));
            got++;
        }
    }
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--receive") == 0) return receive(atoi(argv[2]));
    if (argc < 5 || (strcmp(argv[1], "--direct") && strcmp(argv[1], "--subscribe"))) {
        fprintf(stderr, "usage: seqtool --direct|--subscribe DEST HOLD_SECONDS KEY...\n"
                        "       seqtool --receive COUNT\n");
        return 2;
    }
    int direct = strcmp(argv[1], "--direct") == 0;
    double hold = atof(argv[3]);
    snd_seq_t *seq;
    int err = snd_seq_open(&seq, "default", SND_SEQ_OPEN_OUTPUT, 0);
    if (err < 0) { fprintf(stderr, "seqtool: cannot open the sequencer: %s\n", snd_strerror(err)); return 1; }
    snd_seq_set_client_name(seq, direct ? "vm-sender-direct" : "vm-sender-subscribed");
    int port = snd_seq_create_simple_port(seq, "out", SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ,
                                          SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION);
    if (port < 0) { fprintf(stderr, "seqtool: cannot create a port: %s\n", snd_strerror(port)); return 1; }
    snd_seq_addr_t dest;
    err = snd_seq_parse_address(seq, &dest, argv[2]);
    if (err < 0) { fprintf(stderr, "seqtool: no sequencer port %s: %s\n", argv[2], snd_strerror(err)); return 1; }
    if (!direct) {
        err = snd_seq_connect_to(seq, port, dest.client, dest.port);
        if (err < 0) { fprintf(stderr, "seqtool: cannot subscribe to %s: %s\n", argv[2], snd_strerror(err)); return 1; }
    }
    for (int i = 4; i < argc; i++) {
        snd_seq_event_t ev;
        snd_seq_ev_clear(&ev);
        snd_seq_ev_set_source(&ev, port);
        if (direct) snd_seq_ev_set_dest(&ev, dest.client, dest.port);
        else snd_seq_ev_set_subs(&ev);
        snd_seq_ev_set_direct(&ev);
        snd_seq_ev_set_noteon(&ev, 0, atoi(argv[i]), 100);
        err = snd_seq_event_output_direct(seq, &ev);
        if (err < 0) { fprintf(stderr, "seqtool: cannot send: %s\n", snd_strerror(err)); return 1; }
    }
    printf("seqtool: %d:%d on", snd_seq_client_id(seq), port);
    for (int i = 4; i < argc; i++) printf(" %s", argv[i]);
    printf(" at %.6f\n", seconds(CLOCK_REALTIME));
    fflush(stdout);
    usleep((useconds_t)(hold * 1e6));
    printf("seqtool: exiting at %.6f\n", seconds(CLOCK_REALTIME));
    fflush(stdout);
    return 0; /* no note-offs, no snd_seq_close: the kernel tidies up after us */
}
