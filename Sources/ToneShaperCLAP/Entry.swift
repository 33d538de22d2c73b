import CCLAP
import Glibc
import ToneShaperCore
import ToneShaperInstrument

/// The CLAP instrument `toneshaper.clap`: its entry, its factory and its one plugin's descriptor.
/// `clap_entry` itself is C (Sources/CCLAP/entry.c) and forwards here.

let pluginID: StaticString = "org.toneshaper.instrument"
let pluginName: StaticString = "ToneShaper"
let pluginVendor: StaticString = "ToneShaper for Linux"
let pluginURL: StaticString = "https://github.com/toneshaper/toneshaper-linux"
let pluginVersion: StaticString = "1.0.0"
let pluginDescription: StaticString = "Drawn tone shapes played from MIDI, CLAP notes and MPE, with per-note tuning, pressure and brightness"

@inline(__always) func cString(_ s: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// Features a host sorts the plugin by, NULL-terminated (made once: the descriptor points at it).
nonisolated(unsafe) let features: UnsafeMutablePointer<UnsafePointer<CChar>?> = {
    let list: [StaticString] = ["instrument", "synthesizer", "stereo"]
    let p = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: list.count + 1)
    for (i, s) in list.enumerated() { p[i] = cString(s) }
    p[list.count] = nil
    return p
}()

nonisolated(unsafe) var descriptor = clap_plugin_descriptor_t(
    clap_version: clap_version_t(major: 1, minor: 1, revision: 1),
    id: cString(pluginID), name: cString(pluginName), vendor: cString(pluginVendor), url: cString(pluginURL),
    manual_url: cString(pluginURL), support_url: cString(pluginURL), version: cString(pluginVersion),
    description: cString(pluginDescription), features: nil)

nonisolated(unsafe) var factory = clap_plugin_factory_t(
    get_plugin_count: { _ in 1 },
    get_plugin_descriptor: { _, index in index == 0 ? withUnsafePointer(to: &descriptor) { $0 } : nil },
    create_plugin: { _, host, id in
        guard let host, let id, strcmp(id, cString(pluginID)) == 0, host.pointee.clap_version.major >= 1 else { return nil }
        return UnsafePointer(CLAPInstrument.create(host: host))
    })

/// The shipped shapes, decoded once from the texts compiled into the library (no file is read).
let bundledLibrary: Result<PresetLibrary, ShapeError> = Result { () throws(ShapeError) in
    try BundledShapes.library(bundledShapeFiles)
}

/// One line on the host's stderr (never from `process`), through the file descriptor: no shared FILE.
func say(_ line: String) {
    let text = "toneshaper.clap: \(line)\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
}

@_cdecl("toneshaper_clap_init") public func clapInit(_ path: UnsafePointer<CChar>?) -> Bool {
    descriptor.features = features
    if case .failure(let error) = bundledLibrary {
        say("the shipped shapes cannot be read: \(error)")
        return false
    }
    return true
}

@_cdecl("toneshaper_clap_deinit") public func clapDeinit() {}

@_cdecl("toneshaper_clap_get_factory") public func clapGetFactory(_ id: UnsafePointer<CChar>?) -> UnsafeRawPointer? {
    guard let id, strcmp(id, "clap.plugin-factory") == 0 else { return nil }
    return withUnsafePointer(to: &factory) { UnsafeRawPointer($0) }
}
