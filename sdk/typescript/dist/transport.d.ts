/** What one request needs: the client builds it, a transport sends it. */
export interface Request {
    method: string;
    headers: Record<string, string>;
    body: string | undefined;
    signal: AbortSignal;
}
/** What the client reads of an answer. */
export interface Answer {
    status: number;
    retryAfter: string | null;
    text: string;
}
/** Sends one request and reads the whole answer; rejects when no answer came. */
export type Transport = (url: string, req: Request) => Promise<Answer>;
/** A transport over a fetch function (the one given in ClientOptions.fetch). */
export declare function fetchTransport(f: typeof fetch): Transport;
/**
 * The default transport: node:http and node:https with keep-alive agents of
 * the client's own. It spends about half the CPU of the platform fetch per
 * call, which is most of a Worker's cost. Idle sockets do not keep the
 * process alive (Node unrefs them), and are closed by the server's idle
 * timeout or by Client.close().
 */
export declare function nodeTransport(): {
    send: Transport;
    close(): void;
};
