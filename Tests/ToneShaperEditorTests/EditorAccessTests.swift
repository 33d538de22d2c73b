import Foundation
import Testing
import ToneShaperCore
import ToneShaperLibrary

/// 127.0.0.1 is reachable by every local user and every page the browser shows: the editor
/// answers only its own page, in the browser that opened the address `edit` printed. Each refusal
/// is a 403 with one line, and nothing is read, written, rendered or played for it.
@Suite("Only the editor's own page can use it", .serialized)
struct EditorAccessTests {
    static func shape(_ name: String) throws -> Data { try ShapeFile.encode(EditorAPITests.stepShape(name: name)) }

    /// Nothing was saved: the user library folder was never even made.
    static func libraryUntouched(_ editor: RunningEditor) -> Bool {
        !FileManager.default.fileExists(atPath: editor.userLibrary.directory)
    }

    static func isRefusal(_ answer: RawAnswer, mentioning word: String) -> Bool {
        answer.status == 403 && (answer.json["error"] as? String)?.contains(word) == true
            && answer.json["field"] as? String == "(request)"
    }

    @Test("Host must be 127.0.0.1:PORT or localhost:PORT: a rebound name, another port, none or two are refused")
    func host() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        let p = editor.port
        let secret = "Authorization: token \(editor.secret)"
        let foreign: [[String]] = [
            ["Host: evil.example:\(p)"], ["Host: 127.0.0.1:\(p + 1)"], ["Host: localhost"], ["Host: 127.0.0.1"],
            ["Host: [::1]:\(p)"], ["Host: 127.0.0.1:\(p)", "Host: evil.example:\(p)"], [],
        ]
        for hosts in foreign {
            let answer = try await RawAnswer.send(port: p, "GET /api/info HTTP/1.1", headers: hosts + [secret])
            #expect(Self.isRefusal(answer, mentioning: "Host"), "\(hosts): \(answer.status) \(answer.json)")
            #expect(answer.json["sampleRate"] == nil)
        }
        // A refused save through a rebound name writes nothing.
        let rebound = try await RawAnswer.send(port: p, "POST /api/save HTTP/1.1",
                                         headers: ["Host: evil.example:\(p)", "Origin: http://evil.example:\(p)", secret], body: try Self.shape("rebound"))
        #expect(rebound.status == 403 && Self.libraryUntouched(editor))
        for host in ["127.0.0.1:\(p)", "localhost:\(p)"] {
            let answer = try await RawAnswer.send(port: p, "GET /api/info HTTP/1.1", headers: ["Host: \(host)", secret])
            #expect(answer.status == 200 && answer.json["sampleRate"] as? Double == 48_000, "\(host)")
        }
    }

    @Test("a request that changes something needs the page's own Origin: none, 'null' or a foreign one saves, renders and analyses nothing")
    func origin() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        let p = editor.port
        let body = try Self.shape("csrf")
        let origins: [String?] = [nil, "null", "http://127.0.0.1:\(p + 1)", "http://localhost:\(p + 1)", "http://evil.example", "https://127.0.0.1:\(p)"]
        for origin in origins {
            for path in ["/api/save", "/api/analyse", "/api/export?format=wav"] {
                // A browser's no-cors POST: text/plain, the cookie the page's origin was given.
                var headers = ["Host: 127.0.0.1:\(p)", "Content-Type: text/plain", "Cookie: toneshaper-edit-\(p)=\(editor.secret)"]
                if let origin { headers.append("Origin: \(origin)") }
                let answer = try await RawAnswer.send(port: p, "POST \(path) HTTP/1.1", headers: headers, body: body)
                #expect(Self.isRefusal(answer, mentioning: "Origin"), "\(path) from \(origin ?? "no Origin"): \(answer.status) \(answer.json)")
                #expect(answer.header("Content-Type") == ["application/json"])
            }
        }
        #expect(Self.libraryUntouched(editor))
        // A foreign Origin on a GET is refused too (a page's fetch in cors mode).
        let read = try await editor.request("GET", "/api/shapes", headers: ["Authorization": "token \(editor.secret)", "Origin": "http://evil.example"])
        #expect(read.status == 403)
        // The page's own Origin, under either of its names, may save.
        let own = try await editor.json("POST", "/api/save", body: body)
        #expect(own.status == 200 && own.object["name"] as? String == "csrf")
        let local = try await RawAnswer.send(port: p, "POST /api/save HTTP/1.1",
                                       headers: ["Host: localhost:\(p)", "Origin: http://localhost:\(p)", "Authorization: token \(editor.secret)"],
                                       body: try Self.shape("csrf-local"))
        #expect(local.status == 200)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: editor.userLibrary.directory)) == ["csrf.json", "csrf-local.json"])
    }

    @Test("without this run's secret nothing answers; the printed address's token becomes an HttpOnly, SameSite=Strict cookie for this port")
    func secret() async throws {
        let editor = try await RunningEditor()
        let other = try await RunningEditor()
        defer { editor.stop(); other.stop() }
        let p = editor.port
        #expect(editor.secret.count >= 32 && editor.secret.allSatisfy(\.isHexDigit))  // ≥ 128 bits
        #expect(editor.secret != other.secret)
        let host = "Host: 127.0.0.1:\(p)", origin = "Origin: http://127.0.0.1:\(p)"
        let wrong: [[String]] = [
            [], ["Authorization: token \(other.secret)"], ["Authorization: token "], ["Authorization: Bearer \(editor.secret)"],
            ["Cookie: toneshaper-edit-\(p)=\(other.secret)"], ["Cookie: toneshaper-edit-\(p + 1)=\(editor.secret)"],
            ["Cookie: toneshaper-edit-\(p)=\(editor.secret.dropLast())"],
        ]
        let paths = ["/api/info", "/api/shapes", "/api/shapes/siren", "/api/live", "/page/js/main.js", "/page/editor.css", "/page/index.html"]
        for credentials in wrong {
            for path in paths {
                let answer = try await RawAnswer.send(port: p, "GET \(path) HTTP/1.1", headers: [host] + credentials)
                #expect(Self.isRefusal(answer, mentioning: "secret"), "\(path) with \(credentials): \(answer.status)")
            }
            let save = try await RawAnswer.send(port: p, "POST /api/save HTTP/1.1", headers: [host, origin] + credentials, body: try Self.shape("no-secret"))
            #expect(save.status == 403)
        }
        #expect(Self.libraryUntouched(editor))
        // A person opening the bare address gets a short page saying what to open, not the editor.
        let bare = try await RawAnswer.send(port: p, "GET / HTTP/1.1", headers: [host])
        #expect(bare.status == 403 && bare.header("Content-Type") == ["text/html; charset=utf-8"])
        #expect(String(decoding: bare.body, as: UTF8.self).contains("toneshaper edit") && !String(decoding: bare.body, as: UTF8.self).contains("<script"))
        #expect(try await RawAnswer.send(port: p, "GET /?token=\(other.secret) HTTP/1.1", headers: [host]).status == 403)

        let exchange = try await RawAnswer.send(port: p, "GET /?token=\(editor.secret) HTTP/1.1", headers: [host])
        #expect(exchange.status == 303 && exchange.header("Location") == ["/"])
        let cookie = try #require(exchange.header("Set-Cookie").first)
        let attributes = Set(cookie.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
        #expect(cookie.hasPrefix("toneshaper-edit-\(p)=\(editor.secret);"))
        #expect(attributes.isSuperset(of: ["httponly", "samesite=strict", "path=/"]), "\(cookie)")
        let pair = String(cookie.prefix { $0 != ";" })
        // Another local server may set a decoy of the same name first: the right one still counts.
        for jar in ["Cookie: \(pair)", "Cookie: toneshaper-edit-\(p)=decoy; \(pair)"] {
            let page = try await RawAnswer.send(port: p, "GET / HTTP/1.1", headers: [host, jar])
            #expect(page.status == 200 && String(decoding: page.body, as: UTF8.self).contains("<script type=\"module\""))
            #expect(try await RawAnswer.send(port: p, "GET /page/js/main.js HTTP/1.1", headers: [host, jar]).status == 200)
            #expect(try await RawAnswer.send(port: p, "GET /api/info HTTP/1.1", headers: [host, jar]).json["sampleRate"] as? Double == 48_000)
        }
        let saved = try await RawAnswer.send(port: p, "POST /api/save HTTP/1.1", headers: [host, origin, "Cookie: \(pair)"], body: try Self.shape("with-cookie"))
        #expect(saved.status == 200 && FileManager.default.fileExists(atPath: editor.userLibrary.path(for: "with-cookie")))
    }

    @Test("a fetch by another page (Sec-Fetch-Site cross-site or same-site: <img>, <script>, no-cors) is refused; a navigation to the page is not, and it cannot be framed")
    func fetchSite() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        let p = editor.port
        let host = "Host: 127.0.0.1:\(p)", jar = "Cookie: toneshaper-edit-\(p)=\(editor.secret)"
        for site in ["cross-site", "same-site"] {
            for (path, destination) in [("/api/info", "image"), ("/api/shapes", "script"), ("/api/shapes/siren", "empty"), ("/page/js/main.js", "script"), ("/", "image"), ("/", "iframe")] {
                let answer = try await RawAnswer.send(port: p, "GET \(path) HTTP/1.1",
                                                headers: [host, jar, "Sec-Fetch-Site: \(site)", "Sec-Fetch-Mode: no-cors", "Sec-Fetch-Dest: \(destination)"])
                #expect(Self.isRefusal(answer, mentioning: "Sec-Fetch-Site"), "\(path) as \(destination) from \(site): \(answer.status)")
            }
        }
        for site in ["same-origin", "none"] {
            #expect(try await RawAnswer.send(port: p, "GET /api/info HTTP/1.1", headers: [host, jar, "Sec-Fetch-Site: \(site)"]).status == 200)
        }
        // A link to the editor from another page opens it (top-level, so nothing is readable across origins)...
        let navigation = try await RawAnswer.send(port: p, "GET / HTTP/1.1",
                                            headers: [host, jar, "Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: navigate", "Sec-Fetch-Dest: document"])
        #expect(navigation.status == 200)
        // ...and no other page may show it in a frame (a click on a hidden Save).
        #expect(navigation.header("Content-Security-Policy") == ["frame-ancestors 'none'"])
        #expect(navigation.header("X-Frame-Options") == ["DENY"])
        // Nothing is left in the browser's cache for another page to load without asking the editor.
        let script = try await RawAnswer.send(port: p, "GET /page/js/main.js HTTP/1.1", headers: [host, jar, "Sec-Fetch-Site: same-origin"])
        #expect(script.status == 200 && script.header("Cache-Control") == ["no-store"])
    }

    @Test("the live stream opens only for the page's own Origin with the secret; a refused upgrade is not upgraded and starts no stream")
    func liveStream() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        let p = editor.port
        let upgrade = ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"]
        let own = "Host: 127.0.0.1:\(p)", jar = "Cookie: toneshaper-edit-\(p)=\(editor.secret)", origin = "Origin: http://127.0.0.1:\(p)"
        let refused: [(reason: String, headers: [String])] = [
            ("Origin", [own, jar]), ("Origin", [own, jar, "Origin: null"]), ("Origin", [own, jar, "Origin: https://evil.example"]),
            ("Origin", [own, jar, "Origin: http://127.0.0.1:\(p + 1)"]), ("secret", [own, origin]),
            ("Host", ["Host: evil.example:\(p)", jar, origin]), ("Sec-Fetch-Site", [own, jar, origin, "Sec-Fetch-Site: same-site"]),
        ]
        for (reason, headers) in refused {
            let answer = try await RawAnswer.send(port: p, "GET /api/live HTTP/1.1", headers: headers + upgrade)
            // hummingbird-websocket answers every refused upgrade 400 itself (it allows no other
            // status, nor a body): what matters is that no socket opens.
            #expect(answer.status == 400, "\(reason): \(headers): \(answer.status)")
            #expect(answer.header("Sec-WebSocket-Accept").isEmpty && answer.header("Upgrade").isEmpty)
        }
        // The page's own request opens it.
        guard case .text(let format) = try await editor.openLive().receive() else { throw EditorTestError("no format message") }
        #expect(format["type"] as? String == "format")
    }

    /// curl: what any local process, another user's included, can send.
    static func curl(_ arguments: [String]) async throws -> (code: Int, body: String) {
        let curl = "/usr/bin/curl"
        guard FileManager.default.isExecutableFile(atPath: curl) else {
            throw EditorTestError("\(curl) is missing: apt-get install curl (.ci/install-deps --tests installs it)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: curl)
        process.arguments = ["-s", "--max-time", "30", "-w", "\n%{http_code}"] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = try await offThePool { () -> Data in
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return data
        }
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    @Test("curl (any local process): no secret, a rebound Host or no Origin on a save is refused; the secret and the page's Origin work")
    func curlClient() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        let p = editor.port
        let base = "http://127.0.0.1:\(p)"
        let token = "Authorization: token \(editor.secret)"
        let shapeFile = editor.root.appendingPathComponent("shape.json")
        try FileManager.default.createDirectory(at: editor.root, withIntermediateDirectories: true)
        try Self.shape("from-curl").write(to: shapeFile)

        #expect(try await Self.curl([base + "/api/info"]).code == 403)
        #expect(try await Self.curl([base + "/"]).code == 403)
        // DNS rebinding: a name that resolves to 127.0.0.1 reaches the socket but is not this editor's Host.
        let rebound = try await Self.curl(["--resolve", "evil.example:\(p):127.0.0.1", "-H", token, "http://evil.example:\(p)/api/info"])
        #expect(rebound.code == 403 && rebound.body.contains("Host 'evil.example:\(p)'"))
        let noOrigin = try await Self.curl(["-H", token, "--data-binary", "@" + shapeFile.path, base + "/api/save"])
        #expect(noOrigin.code == 403 && noOrigin.body.contains("no Origin header"))
        #expect(Self.libraryUntouched(editor))

        let info = try await Self.curl(["-H", token, base + "/api/info"])
        #expect(info.code == 200 && info.body.contains("\"sampleRate\""))
        let saved = try await Self.curl(["-H", token, "-H", "Origin: \(base)", "-H", "Content-Type: application/json",
                                         "--data-binary", "@" + shapeFile.path, base + "/api/save"])
        #expect(saved.code == 200, "\(saved.body)")
        #expect(try ShapeFile.load(path: editor.userLibrary.path(for: "from-curl")) == EditorAPITests.stepShape(name: "from-curl"))
        // The address `edit` prints, followed with a cookie jar, as a browser does.
        let jar = editor.root.appendingPathComponent("jar.txt").path
        let page = try await Self.curl(["-L", "-c", jar, "-b", jar, "\(base)/?token=\(editor.secret)"])
        #expect(page.code == 200 && page.body.contains("<html"))
    }
}
