import { QueueClient } from '../../lib/core/queue/client.js';
import { ChronosServer, type ServerOptions } from '../../lib/core/worker/server.js';
import { EventBus } from '../../lib/core/runtime/events.js';
import { deleteNamespace, newNamespace, redisUrl } from './redis.js';
import { recordingLogger } from './wait.js';

/** A client and servers on one private namespace; `close()` stops them and deletes the namespace. */
export class QueueRig {
  readonly namespace = newNamespace('q');
  readonly events = new EventBus();
  readonly client: QueueClient;
  readonly servers: ChronosServer[] = [];
  readonly logger = recordingLogger();

  constructor() {
    this.client = new QueueClient({ connection: redisUrl(), namespace: this.namespace, events: this.events });
  }

  server(options: ServerOptions = {}): ChronosServer {
    const s = new ChronosServer({
      connection: redisUrl(),
      namespace: this.namespace,
      logger: this.logger,
      events: this.events,
      ...options,
    });
    this.servers.push(s);
    return s;
  }

  async close(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.shutdown()));
    await this.client.close();
    await deleteNamespace(this.namespace);
  }
}
