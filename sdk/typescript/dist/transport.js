import * as http from "node:http";
import * as https from "node:https";
// An idle keep-alive socket is closed after this long, well before the
// server's own idle timeout (120 s), so a request never goes out on a
// socket the server is closing. (The agent applies it to idle sockets only;
// a request in flight is bounded by the client's own timer.)
const FREE_SOCKET_MS = 30_000;
/** A transport over a fetch function (the one given in ClientOptions.fetch). */
export function fetchTransport(f) {
    return async (url, req) => {
        const resp = await f(url, { method: req.method, headers: req.headers, body: req.body, signal: req.signal });
        return { status: resp.status, retryAfter: resp.headers.get("Retry-After"), text: await resp.text() };
    };
}
/**
 * The default transport: node:http and node:https with keep-alive agents of
 * the client's own. It spends about half the CPU of the platform fetch per
 * call, which is most of a Worker's cost. Idle sockets do not keep the
 * process alive (Node unrefs them), and are closed by the server's idle
 * timeout or by Client.close().
 */
export function nodeTransport() {
    const agents = {
        "http:": new http.Agent({ keepAlive: true, maxSockets: 64, timeout: FREE_SOCKET_MS }),
        "https:": new https.Agent({ keepAlive: true, maxSockets: 64, timeout: FREE_SOCKET_MS }),
    };
    const send = (url, req) => new Promise((resolve, reject) => {
        const u = new URL(url);
        const secure = u.protocol === "https:";
        if (!secure && u.protocol !== "http:") {
            reject(new TypeError(`unsupported protocol ${u.protocol} (http: or https:)`));
            return;
        }
        const body = req.body === undefined ? undefined : Buffer.from(req.body, "utf8");
        const headers = { ...req.headers };
        if (body)
            headers["Content-Length"] = String(body.length);
        const opts = { method: req.method, headers, agent: agents[secure ? "https:" : "http:"], signal: req.signal };
        const onAnswer = (res) => {
            const chunks = [];
            res.on("data", (c) => chunks.push(c));
            res.on("error", reject);
            res.on("aborted", () => reject(new Error("the connection closed before the answer ended")));
            res.on("end", () => {
                const ra = res.headers["retry-after"];
                resolve({ status: res.statusCode ?? 0, retryAfter: ra === undefined ? null : String(ra), text: Buffer.concat(chunks).toString("utf8") });
            });
        };
        const r = secure ? https.request(u, opts, onAnswer) : http.request(u, opts, onAnswer);
        r.on("error", reject);
        r.end(body);
    });
    return {
        send,
        close() {
            agents["http:"].destroy();
            agents["https:"].destroy();
        },
    };
}
