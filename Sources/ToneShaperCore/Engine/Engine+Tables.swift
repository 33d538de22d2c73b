import ToneShaperMIDI

/// The band-limited tables a known performance needs, built before it is rendered.
extension Engine {
    /// The waves this engine can play while `messages` are applied: the parts' own now, those of
    /// the presets the program changes select, and every wave a controller mapped to the wave type
    /// can pick. (Nothing else in a MIDI performance changes a part's wave.)
    public func waves(reachableBy messages: [TimedMIDIMessage]) -> Set<WaveType> {
        var waves = Set((0..<16).map { parts[$0].wave })
        for timed in messages {
            if case .programChange(_, let program) = timed.message {
                let index = programPresets[Int(program & 127)]
                if index >= 0 { waves.insert(presets.info[index].wave) }
            }
        }
        for a in controllerMap.assignments where a.parameter == .waveType {
            for value in 0...127 { waves.insert(WaveType(index: Int(a.value(for: UInt8(value)).rounded()))) }
        }
        return waves
    }

    /// Builds the band-limited tables `messages` can make this engine play (see
    /// `EngineConfiguration.buildsEveryTable`). Call it before rendering them, never on the audio thread.
    /// An array, not any sequence: called from another module, a generic one went unspecialised and
    /// allocated once per message.
    public func prepareTables(for messages: [TimedMIDIMessage]) {
        tablesOwner.build(waves(reachableBy: messages))
    }
}
