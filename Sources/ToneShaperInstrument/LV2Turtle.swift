/// The LV2 bundle's description (manifest.ttl, toneshaper.ttl, presets.ttl), written from the
/// parameter table and the shipped shapes: the ports a host sees are the controls the plugin
/// applies. A test holds packaging/lv2/'s files to this (and rewrites them when asked).
public enum LV2Turtle {
    public static let pluginURI = "urn:toneshaper:lv2:instrument"
    /// Port indices: MIDI in, the two outputs, the shape, then the table's controls.
    public static let shapePort = 3
    public static func port(of parameter: InstrumentParameter) -> Int { 4 + parameter.id }
    /// The atom output after the controls: the plugin's patch:Set answers (which file it plays).
    public static var notifyPort: Int { 4 + InstrumentParameter.table.count }

    /// The files a host's file chooser sets with patch:Set (atom:Path parameters), in the order the
    /// plugin numbers them: a shape (.json), a Scala scale (.scl), a Scala keyboard map (.kbm).
    public static let fileParameters: [(uri: String, symbol: String, label: String, comment: String)] = [
        ("urn:toneshaper:lv2:shape-file", "shape-file", "Shape file",
         "A tone shape (.json, as toneshaper edit saves it), played on every channel; kept in the state by content."),
        ("urn:toneshaper:lv2:scale-file", "scale-file", "Scale file",
         "A Scala scale (.scl) the keys are tuned to; kept in the state as its text."),
        ("urn:toneshaper:lv2:keymap-file", "keymap-file", "Keyboard map file",
         "A Scala keyboard mapping (.kbm) for the scale; kept in the state as its text."),
    ]

    static func presetURI(_ name: String) -> String { "urn:toneshaper:lv2:preset:" + name }

    public static func manifest(shapeNames: [String]) -> String {
        var text = """
            @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
            @prefix pset: <http://lv2plug.in/ns/ext/presets#> .
            @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .

            <\(pluginURI)> a lv2:Plugin ;
                lv2:binary <toneshaper.so> ;
                rdfs:seeAlso <toneshaper.ttl> .

            """
        for name in shapeNames {
            text += """

                <\(presetURI(name))> a pset:Preset ;
                    lv2:appliesTo <\(pluginURI)> ;
                    rdfs:label "\(name)" ;
                    rdfs:seeAlso <presets.ttl> .

                """
        }
        return text
    }

    /// Each shipped shape as a preset that selects it, so hosts list the shapes by name.
    public static func presets(shapeNames: [String]) -> String {
        var text = """
            @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
            @prefix pset: <http://lv2plug.in/ns/ext/presets#> .
            @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .

            """
        for (index, name) in shapeNames.enumerated() {
            text += """

                <\(presetURI(name))> a pset:Preset ;
                    lv2:appliesTo <\(pluginURI)> ;
                    rdfs:label "\(name)" ;
                    lv2:port [ lv2:symbol "shape" ; pset:value \(index) ] .

                """
        }
        return text
    }

    public static func plugin(shapeNames: [String]) -> String {
        var ports = [
            """
                [ a lv2:InputPort, atom:AtomPort ; atom:bufferType atom:Sequence ; atom:supports midi:MidiEvent, patch:Message ;
                  lv2:designation lv2:control ; lv2:index 0 ; lv2:symbol "midi_in" ; lv2:name "MIDI In" ]
            """,
            """
                [ a lv2:OutputPort, lv2:AudioPort ; lv2:index 1 ; lv2:symbol "out_l" ; lv2:name "Left" ]
            """,
            """
                [ a lv2:OutputPort, lv2:AudioPort ; lv2:index 2 ; lv2:symbol "out_r" ; lv2:name "Right" ]
            """,
            control(index: shapePort, symbol: "shape", name: "Shape", range: 0...Double(max(0, shapeNames.count - 1)),
                    defaultValue: 0, properties: ["lv2:integer", "lv2:enumeration"], unit: nil, choices: shapeNames),
        ]
        for row in InstrumentParameter.table {
            var properties: [String] = []
            if row.isInteger { properties.append("lv2:integer") }
            if !row.choices.isEmpty { properties.append("lv2:enumeration") }
            if row.isLogarithmic { properties.append("pprops:logarithmic") }
            let unit: String? = switch row.unit {
            case .seconds: "units:s"
            case .semitones: "units:semitone12TET"
            case .none: nil
            }
            ports.append(control(index: port(of: row), symbol: row.symbol, name: row.name, range: row.range,
                                 defaultValue: row.defaultValue, properties: properties, unit: unit, choices: row.choices))
        }
        ports.append("""
                [ a lv2:OutputPort, atom:AtomPort ; atom:bufferType atom:Sequence ; atom:supports patch:Message ;
                  lv2:designation lv2:control ; lv2:index \(notifyPort) ; lv2:symbol "notify" ; lv2:name "Notify" ]
            """)
        let parameters = fileParameters.map { p in
            """
            <\(p.uri)> a lv2:Parameter ;
                rdfs:label "\(p.label)" ;
                rdfs:comment "\(p.comment)" ;
                rdfs:range atom:Path .

            """
        }.joined(separator: "\n") + "\n"
        return """
            @prefix atom: <http://lv2plug.in/ns/ext/atom#> .
            @prefix doap: <http://usefulinc.com/ns/doap#> .
            @prefix log: <http://lv2plug.in/ns/ext/log#> .
            @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
            @prefix midi: <http://lv2plug.in/ns/ext/midi#> .
            @prefix patch: <http://lv2plug.in/ns/ext/patch#> .
            @prefix pprops: <http://lv2plug.in/ns/ext/port-props#> .
            @prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
            @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
            @prefix state: <http://lv2plug.in/ns/ext/state#> .
            @prefix units: <http://lv2plug.in/ns/extensions/units#> .
            @prefix urid: <http://lv2plug.in/ns/ext/urid#> .
            @prefix work: <http://lv2plug.in/ns/ext/worker#> .

            # Generated from InstrumentParameter.table and Presets/ (LV2Turtle): do not edit by hand;
            # TONESHAPER_WRITE_LV2=1 swift test --filter LV2Turtle rewrites it.
            \(parameters)<\(pluginURI)> a lv2:Plugin, lv2:InstrumentPlugin ;
                doap:name "ToneShaper" ;
                rdfs:comment "A MIDI instrument that plays drawn frequency curves (tone shapes)." ;
                lv2:requiredFeature urid:map ;
                lv2:optionalFeature lv2:hardRTCapable, work:schedule, log:log ;
                lv2:extensionData state:interface, work:interface ;
                patch:writable \(fileParameters.map { "<\($0.uri)>" }.joined(separator: ", ")) ;
                lv2:port
            \(ports.joined(separator: " ,\n")) .

            """
    }

    static func control(index: Int, symbol: String, name: String, range: ClosedRange<Double>, defaultValue: Double,
                        properties: [String], unit: String?, choices: [String]) -> String {
        var text = "    [ a lv2:InputPort, lv2:ControlPort ; lv2:index \(index) ; lv2:symbol \"\(symbol)\" ; lv2:name \"\(name)\" ;\n"
        text += "      lv2:default \(decimal(defaultValue)) ; lv2:minimum \(decimal(range.lowerBound)) ; lv2:maximum \(decimal(range.upperBound))"
        if !properties.isEmpty { text += " ;\n      lv2:portProperty \(properties.joined(separator: ", "))" }
        if let unit { text += " ;\n      units:unit \(unit)" }
        for (i, choice) in choices.enumerated() {
            text += " ;\n      lv2:scalePoint [ rdfs:label \"\(choice)\" ; rdf:value \(i) ]"
        }
        return text + " ]"
    }

    /// A Turtle decimal (always with a point, never an exponent).
    static func decimal(_ value: Double) -> String {
        let text = "\(value)"
        return text.contains("e") ? "\(Int(value.rounded()))" : text
    }
}
