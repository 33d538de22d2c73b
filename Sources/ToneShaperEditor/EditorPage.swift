import Foundation

/// Where the page's files are: `TONESHAPER_EDITOR_PAGE`, an installed copy
/// (PREFIX/share/toneshaper/editor, what install.sh makes), else the package's resource bundle.
enum EditorPage {
    static func folder() throws -> String {
        let fm = FileManager.default
        if let override = ProcessInfo.processInfo.environment["TONESHAPER_EDITOR_PAGE"], !override.isEmpty {
            guard fm.fileExists(atPath: override + "/index.html") else {
                throw EditorError(status: 500, "TONESHAPER_EDITOR_PAGE=\(override): no index.html there")
            }
            return override
        }
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let installed = exe.appendingPathComponent("../share/toneshaper/editor").standardized.path
        if fm.fileExists(atPath: installed + "/index.html") { return installed }
        // Bundle.module stops the program when the bundle is missing, so it is asked last.
        if let bundled = Bundle.module.resourceURL?.appendingPathComponent("Page").path,
           fm.fileExists(atPath: bundled + "/index.html") {
            return bundled
        }
        throw EditorError(status: 500, "cannot find the editor page (looked in \(installed) and the build's resources); set TONESHAPER_EDITOR_PAGE")
    }
}
