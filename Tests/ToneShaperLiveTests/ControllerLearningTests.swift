import Testing
import ToneShaperCore
import ToneShaperLive
import ToneShaperMIDI

@Suite("Learning a controller")
struct ControllerLearningTests {
    @Test("the mapping line for fidelity is the default map's range and curve")
    func fidelityLine() {
        #expect(ControllerLearning.describe(channel: 0, controller: 21, value: 64) == "cc 21 channel 1 (value 64)")
        #expect(ControllerLearning.mappingLine(controller: 21, parameter: .fidelity) == "cc 21  fidelity  1 2000 exponential")
        #expect(ControllerLearning.mappingLine(controller: 22, parameter: .pan, channel: 2) == "cc 22  pan  -1 1 linear channel 3")
    }

    @Test("every parameter's line is accepted by the mapping-file reader and maps the knob to that parameter")
    func everyLineParses() throws {
        for parameter in Parameter.allCases {
            let line = ControllerLearning.mappingLine(controller: 21, parameter: parameter, channel: 4)
            let map = try ControllerMapFile.parse(line, file: "learnt.map")
            let assignment = try #require(map.assignment(channel: 4, controller: 21))
            #expect(assignment.parameter == parameter)
            #expect(assignment.value(for: 0) == ControllerLearning.suggestedRange(for: parameter).minimum)
            #expect(assignment.value(for: 127) == ControllerLearning.suggestedRange(for: parameter).maximum)
            #expect(map.assignment(channel: 3, controller: 21) == nil)
        }
    }

    @Test("channel mode messages and RPN/NRPN selectors are passed over: they are not knobs to map")
    func firstLearnable() {
        let found = ControllerLearning.firstControlChange(in: [
            .noteOn(channel: 0, note: 60, velocity: 1),
            .controlChange(channel: 0, controller: 121, value: 0),
            .controlChange(channel: 0, controller: 101, value: 0),
            .controlChange(channel: 2, controller: 21, value: 64),
            .controlChange(channel: 0, controller: 7, value: 1),
        ])
        #expect(found?.channel == 2 && found?.controller == 21 && found?.value == 64)
    }
}
