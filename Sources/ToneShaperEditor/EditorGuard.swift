import Foundation
import Hummingbird
import Synchronization

/// Who may use the editor: only its own page, in the browser of whoever started `edit`.
///
/// 127.0.0.1 is reachable by every local user and by every page the browser shows, so each
/// request is checked before anything is read, written, rendered or played (docs/editor-api.md):
/// - `Host` is this server's own (`127.0.0.1:PORT` or `localhost:PORT`): a DNS-rebound name is not;
/// - a per-run secret: `?token=SECRET` on `/` (the address `edit` prints) is exchanged for an
///   HttpOnly, SameSite=Strict cookie; scripts may send `Authorization: token SECRET` instead;
/// - the cookie also reaches 127.0.0.1 from pages on other ports (the same site), so the
///   WebSocket upgrade and every request that changes something must carry this page's `Origin`,
///   and a present `Origin` or `Sec-Fetch-Site` must say the request comes from this page.
public final class EditorAccess: Sendable {
    /// The per-run secret: 192 random bits, hex (what Jupyter's token is).
    public let secret: String
    /// The bound port; 0 until the server listens (every request is refused until then).
    private let boundPort = Atomic<Int>(0)

    public init() {
        var generator = SystemRandomNumberGenerator()
        secret = (0..<24).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    var port: Int { boundPort.load(ordering: .acquiring) }

    func listening(on port: Int) { boundPort.store(port, ordering: .releasing) }

    /// The address `edit` prints and opens: the page, with the secret to exchange for the cookie.
    public func openingURL(port: Int) -> String { "http://127.0.0.1:\(port)/?token=\(secret)" }

    /// The cookie's name carries the port: cookies ignore ports, and two editors may run at once.
    var cookieName: String { "toneshaper-edit-\(port)" }

    /// Why a request is refused (403), or nil when it may go on.
    enum Verdict: Equatable {
        case allowed
        /// The secret was presented on `/?token=`: answer with the cookie and a redirect to `/`.
        case exchange
        /// Refused: the line to answer with; `page` when a person opened `/` without the secret.
        case refused(String, page: Bool = false)
    }

    func verdict(_ request: Request) -> Verdict {
        let port = port
        guard port != 0 else { return .refused("the editor is not listening yet") }
        let hosts = ["127.0.0.1:\(port)", "localhost:\(port)"]
        guard let host = request.head.authority else { return .refused("no Host header: this editor answers only \(hosts[0]) and \(hosts[1])") }
        guard hosts.contains(host), !request.headers.contains(where: { $0.name.canonicalName == "host" }) else {
            return .refused("Host '\(Self.quoted(host))' is not this editor's (\(hosts[0]) or \(hosts[1]))")
        }
        let origins = request.headers[values: .origin]
        let ownOrigins = hosts.map { "http://" + $0 }
        if origins.count > 1 || (origins.count == 1 && !ownOrigins.contains(origins[0])) {
            return .refused("Origin '\(Self.quoted(origins.joined(separator: ", ")))' is not this editor's page (\(ownOrigins[0]))")
        }
        let isUpgrade = request.headers[.upgrade]?.lowercased() == "websocket"
        if origins.isEmpty && (isUpgrade || (request.method != .get && request.method != .head)) {
            return .refused("no Origin header: only the editor's own page may \(isUpgrade ? "open the live stream" : "send \(request.method.rawValue) requests")")
        }
        let path = request.uri.path
        let isPage = path == "/" && (request.method == .get || request.method == .head)
        // A top-level navigation to the page from elsewhere is harmless (it cannot be framed or
        // read across origins); every other fetch must come from the page itself or the user.
        let site = request.headers[values: Self.secFetchSite]
        let navigation = request.headers[Self.secFetchDest] == "document"
        if !(isPage && navigation), !site.allSatisfy({ $0 == "same-origin" || $0 == "none" }) {
            return .refused("Sec-Fetch-Site '\(Self.quoted(site.joined(separator: ", ")))': only the editor's own page may use \(Self.quoted(path))")
        }
        if isPage, let token = request.uri.queryParameters.get("token") {
            return Self.matches(token, secret) ? .exchange
                : .refused("the token in this address is not this editor's: open the address `toneshaper edit` printed", page: true)
        }
        if hasSecret(request) { return .allowed }
        return .refused("no editor secret: open the address `toneshaper edit` printed (http://127.0.0.1:\(port)/?token=…), "
                        + "or send 'Authorization: token SECRET'", page: isPage)
    }

    /// The cookie (any cookie of that name: another local server could set a decoy first) or the header.
    func hasSecret(_ request: Request) -> Bool {
        if let authorization = request.headers[.authorization] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "token", Self.matches(String(parts[1]), secret) { return true }
        }
        let name = cookieName
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " }
                guard let equals = trimmed.firstIndex(of: "="), trimmed[..<equals] == name else { continue }
                if Self.matches(String(trimmed[trimmed.index(after: equals)...]), secret) { return true }
            }
        }
        return false
    }

    /// The answer to `/?token=SECRET`: the cookie, and the page's address without the secret.
    func exchangeResponse() -> Response {
        var response = Response(status: .seeOther, headers: [.location: "/", .cacheControl: "no-store", Self.referrerPolicy: "no-referrer"])
        response.setCookie(Cookie(name: cookieName, value: secret, path: "/", httpOnly: true, sameSite: .strict))
        return response
    }

    /// A refusal: JSON like the API's other errors, or a short page for a person at `/`.
    func refusal(_ message: String, page: Bool) -> Response {
        guard page else { return EditorServer.json(EditorError(status: 403, message), status: .forbidden) }
        let escaped = message.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        let html = """
            <!doctype html><html><head><meta charset="utf-8"><title>ToneShaper editor</title></head>
            <body><h1>Open the address <code>toneshaper edit</code> printed</h1><p>\(escaped).</p>
            <p>The editor answers only the address with its secret (<code>/?token=…</code>), printed when it started.</p></body></html>
            """
        return Response(status: .forbidden, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                        body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// Equal strings, compared in a time that does not depend on where they first differ.
    static func matches(_ given: String, _ expected: String) -> Bool {
        let a = Array(given.utf8), b = Array(expected.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for i in b.indices { difference |= b[i] ^ (i < a.count ? a[i] : 0) }
        return difference == 0
    }

    /// A hostile header value, shortened and with control characters shown, for a one-line answer.
    static func quoted(_ text: String) -> String {
        let shown = String(text.unicodeScalars.prefix(80).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
        return text.unicodeScalars.count > 80 ? shown + "…" : shown
    }

    /// HTTPTypes' field name (Hummingbird exports `HTTPFields`, not `HTTPField`).
    typealias FieldName = HTTPFields.Element.Name
    static let secFetchSite = FieldName("Sec-Fetch-Site")!
    static let secFetchDest = FieldName("Sec-Fetch-Dest")!
    static let referrerPolicy = FieldName("Referrer-Policy")!
}

/// The check in front of every HTTP route and the page's files (the WebSocket router asks
/// `EditorAccess` itself, before it upgrades).
struct EditorGuardMiddleware<Context: RequestContext>: RouterMiddleware {
    let access: EditorAccess

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        switch access.verdict(request) {
        case .allowed:
            var response = try await next(request, context)
            // The page must not be framed by another page (a click on a hidden Save), and nothing
            // is kept in the browser's cache, where another page's <script> would find it unchecked.
            response.headers[.contentSecurityPolicy] = "frame-ancestors 'none'"
            response.headers[EditorAccess.frameOptions] = "DENY"
            response.headers[.cacheControl] = "no-store"
            return response
        case .exchange:
            return access.exchangeResponse()
        case .refused(let message, let page):
            return access.refusal(message, page: page)
        }
    }
}

extension EditorAccess {
    static let frameOptions = FieldName("X-Frame-Options")!
}
