import CALSA
import CALSAShim

/// A failed ALSA call, told the way a user needs to read it:
/// what was attempted, then why ("cannot open PCM device 'hw:9': No such file or directory").
///
/// The parts are kept separately and joined only in `description`, so creating one on the
/// audio thread's failure path copies no text.
public struct ALSAError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What was attempted, e.g. "cannot open PCM device".
    public let attempt: String
    /// The device, port or source the attempt was about; shown quoted after `attempt`.
    public let subject: String?
    /// The negative errno alsa-lib returned, or 0 when the failure is not an alsa-lib code.
    public let code: Int32
    /// A better explanation than snd_strerror(code), when we have one.
    public let reason: String?
    /// alsa-lib's own last message (from the quiet error handler), when it adds something.
    public let detail: String?

    public init(_ attempt: String, subject: String? = nil, code: Int32 = 0, reason: String? = nil, detail: String? = nil) {
        self.attempt = attempt
        self.subject = subject
        self.code = code
        self.reason = reason
        self.detail = detail
    }

    public var description: String {
        var text = attempt
        if let subject { text += " '\(subject)'" }
        if let reason {
            text += ": " + reason
        } else if code != 0 {
            text += ": " + String(cString: snd_strerror(code))
        }
        if let detail, !detail.isEmpty { text += " (alsa-lib: \(detail))" }
        return text
    }

    /// alsa-lib's last reported message, or nil if it reported none since the last clear.
    static func lastLibraryMessage() -> String? {
        let text = String(cString: toneshaper_alsa_last_error())
        return text.isEmpty ? nil : text
    }

    /// Silences alsa-lib's stderr printing and forgets its last message; called before each open.
    static func prepareLibrary() {
        toneshaper_alsa_quiet_errors()
        toneshaper_alsa_clear_last_error()
    }
}
