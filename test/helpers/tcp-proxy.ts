import net from 'node:net';

/**
 * A loopback TCP proxy in front of one Redis, for silent partitions: {@link blackhole} stops
 * forwarding in both directions without closing a socket (a firewall dropping packets, a network
 * blip: the client sees no error, only silence), {@link heal} forwards again. Bytes sent during a
 * blackhole are held, not lost, and delivered at the heal, as TCP's retransmission would.
 * {@link latency} delays every chunk each way by a fixed time (a slow link: a round trip costs twice
 * that more), in order. Used by the tests and by the chaos run (bench/chaos/fleet.ts: one proxy per replica slot).
 */
export class TcpProxy {
  private readonly links = new Set<Link>();
  private silent = false;
  private mute = false;
  private delayMs = 0;
  /** When the last {@link blackhole} began, epoch ms (the test's clock), or undefined. */
  blackholedAt?: number;
  /** Bytes the target (Redis) has sent to the proxy's clients so far, every connection counted: what a read cost on the wire. */
  bytesFromTarget = 0;

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  /** Listens on a free loopback port and forwards every connection to `target` (`host:port`). */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = new TcpProxy(server, (server.address() as net.AddressInfo).port);
    server.on('connection', (client: net.Socket) => proxy.accept(client, target));
    return proxy;
  }

  /** A `redis://` URL that goes through the proxy. */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Stops forwarding both ways on every connection, present and future; no socket is closed. */
  blackhole(): void {
    this.silent = true;
    this.blackholedAt = Date.now();
  }

  /**
   * From now on Redis's replies are dropped (never delivered), while what the clients send still
   * reaches Redis: with {@link cut}, a reply lost with its connection after Redis ran the command.
   */
  dropReplies(): void {
    this.mute = true;
  }

  /** Closes every connection (the clients reconnect through the proxy, which forwards as before). */
  cut(): void {
    this.mute = false;
    for (const link of this.links) link.destroy();
  }

  /** From now on every chunk, each way, is delivered `ms` after it came (0: at once); order is kept. */
  latency(ms: number): void {
    this.delayMs = Math.max(0, ms);
  }

  /** Forwards again: what was held is delivered, in order. */
  heal(): void {
    this.silent = false;
    for (const link of this.links) link.flush();
  }

  /** Closes the listener and every connection. */
  async close(): Promise<void> {
    for (const link of this.links) link.destroy();
    this.links.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket, target: { host: string; port: number }): void {
    const upstream = net.connect(target.port, target.host);
    upstream.on('data', (b: Buffer) => void (this.bytesFromTarget += b.length));
    const link = new Link(
      client,
      upstream,
      () => this.silent,
      () => this.delayMs,
      () => this.mute,
    );
    this.links.add(link);
    link.closed.then(
      () => this.links.delete(link),
      () => undefined,
    );
  }
}

/** One proxied connection: bytes each way are forwarded, or held while the proxy is silent. */
class Link {
  private readonly held: [net.Socket, Buffer][] = [];
  /** Per direction (by destination): the delayed chunks, oldest first, each with when it is due. */
  private readonly delayed = new Map<net.Socket, { at: number; b: Buffer }[]>();
  readonly closed: Promise<void>;

  constructor(
    private readonly client: net.Socket,
    private readonly upstream: net.Socket,
    private readonly silent: () => boolean,
    private readonly delayMs: () => number = () => 0,
    private readonly mute: () => boolean = () => false,
  ) {
    client.on('data', (b: Buffer) => this.forward(upstream, b));
    upstream.on('data', (b: Buffer) => void (this.mute() || this.forward(client, b)));
    this.closed = new Promise((resolve) => {
      for (const s of [client, upstream]) s.on('error', () => this.destroy()).on('close', () => (this.destroy(), resolve()));
    });
  }

  flush(): void {
    for (const [to, b] of this.held.splice(0)) if (!to.destroyed) to.write(b);
  }

  destroy(): void {
    this.client.destroy();
    this.upstream.destroy();
  }

  private forward(to: net.Socket, b: Buffer): void {
    const delay = this.delayMs();
    const queue = this.delayed.get(to) ?? [];
    if (delay === 0 && queue.length === 0) return this.deliver(to, b);
    queue.push({ at: Date.now() + delay, b });
    this.delayed.set(to, queue);
    if (queue.length === 1) this.drainLater(to, queue);
  }

  /** Delivers the chunks of `queue` as they fall due, in order (one timer per direction). */
  private drainLater(to: net.Socket, queue: { at: number; b: Buffer }[]): void {
    setTimeout(
      () => {
        while (queue.length > 0 && queue[0].at <= Date.now()) this.deliver(to, queue.shift()!.b);
        if (queue.length > 0) this.drainLater(to, queue);
      },
      Math.max(0, queue[0].at - Date.now()),
    );
  }

  private deliver(to: net.Socket, b: Buffer): void {
    if (this.silent() || this.held.length > 0) this.held.push([to, b]);
    else if (!to.destroyed) to.write(b);
  }
}
