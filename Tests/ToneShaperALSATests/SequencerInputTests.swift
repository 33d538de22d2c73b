import Foundation
import Testing
@testable import ToneShaperALSA

@Suite("Sequencer input without sound hardware")
struct SequencerInputTests {
    @Test("opening without /dev/snd/seq says to load the kernel module",
          .enabled(if: !FileManager.default.fileExists(atPath: "/dev/snd/seq")))
    func openFailsClearly() throws {
        let error = try #require(throws: ALSAError.self) { try SequencerInput() }
        #expect(error.description
                == "cannot open the ALSA sequencer: No such file or directory — is the snd-seq kernel module loaded?")
    }
}
