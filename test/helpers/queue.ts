import { Inspector } from '../../lib/core/admin/inspector.js';
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
  private inspectorValue?: Inspector;

  constructor() {
    this.client = new QueueClient({ connection: redisUrl(), namespace: this.namespace, events: this.events });
  }

  /** An Inspector on the rig's namespace, made at the first use; `close()` closes it. */
  get inspector(): Inspector {
    return (this.inspectorValue ??= new Inspector({ connection: redisUrl(), namespace: this.namespace }));
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
    await this.inspectorValue?.close();
    await Promise.all(this.servers.map((s) => s.shutdown()));
    await this.client.close();
    await deleteNamespace(this.namespace);
  }
}
