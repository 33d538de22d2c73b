import Foundation
import ToneShaperCore

/// What the live tests of every front-end share: the shipped presets and an engine on them.
public enum Fixtures {
    /// The repository's Presets folder (this file is Tests/EngineFixtures/Fixtures.swift).
    public static let library: PresetLibrary = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try! PresetLibrary.load(directory: root.appendingPathComponent("Presets").path)
    }()

    /// An engine at 48 kHz with every channel on the preset with this program number.
    public static func engine(program: Int? = nil, voices: Int = 16, threads: Int = 1) -> Engine {
        var config = EngineConfiguration(sampleRate: 48_000, voices: voices)
        config.threads = threads
        config.helpersJoinEveryBlock = true  // so the helper takes a share of every period, however light
        if let program, let index = library.index(program: program) {
            config.channelPresets = Array(repeating: index, count: 16)
        }
        return Engine(library: library, configuration: config)
    }

    /// Largest absolute sample in a range of an interleaved buffer.
    public static func peak(_ samples: [Float], _ range: Range<Int>) -> Float {
        var p: Float = 0
        for i in range { p = max(p, abs(samples[i])) }
        return p
    }
}
