import type { Plugins } from '../settings/plugins.js';
import type { Model } from './define.js';

/**
 * Every model module. Adding a model is one line here: each module's exported declarations (values made
 * by defineModel) are collected, so a file may declare several (the bookings plugin does).
 */
const modules: Array<Record<string, unknown>> = await Promise.all([
  import('./user.js'),
  import('./product.js'),
  import('./event.js'),
  import('./event-registrant.js'),
  import('./event-session.js'),
  import('./waiting-list.js'),
  import('./order.js'),
  import('./order-item.js'),
  import('./post.js'),
  import('./page.js'),
  import('./email.js'),
  import('./message.js'),
  import('./file.js'),
  import('./coupon-code.js'),
  import('./location.js'),
  import('./video.js'),
  import('./comment.js'),
  import('./survey.js'),
  import('./survey-answer.js'),
  import('./question.js'),
  import('./question-option.js'),
  import('./mailing-list.js'),
  import('./mailing-list-registrant.js'),
  import('./address.js'),
  import('./phone-number.js'),
  import('./passkey.js'),
  import('./webhook-log.js'),
  import('./subscription-tier.js'),
  import('./group.js'),
  import('./group-member.js'),
]);

function isModel(v: unknown): v is Model {
  return typeof v === 'object' && v !== null && typeof (v as Model).className === 'string' && typeof (v as Model).table === 'string' && 'exposure' in v;
}

export class ModelRegistry {
  private readonly byClass = new Map<string, Model>();

  private readonly tables = new Set<string>();

  constructor(models: Iterable<Model>) {
    for (const m of models) this.add(m);
  }

  /** Core models at load; a plugin's when its module is installed (src/boot/plugins.ts). */
  add(m: Model): void {
    if (this.byClass.has(m.className)) throw new Error(`model ${m.className} declared twice`);
    if (this.tables.has(m.table)) throw new Error(`table ${m.table} declared by two models`);
    this.byClass.set(m.className, m);
    this.tables.add(m.table);
  }

  all(): Model[] {
    return [...this.byClass.values()];
  }

  /** Exact, case-sensitive lookup, regardless of exposure or plugin state. */
  get(className: string): Model | undefined {
    return this.byClass.get(className);
  }

  /** The model as a CRUD resource: declared, its plugin (if any) active. Exposure per verb is the caller's. */
  resource(className: string, plugins: Pick<Plugins, 'isActive'>): Model | undefined {
    const m = this.byClass.get(className);
    if (!m) return undefined;
    if (m.plugin && !plugins.isActive(m.plugin)) return undefined;
    return m;
  }
}

export const models = new ModelRegistry(modules.flatMap((mod) => Object.values(mod).filter(isModel)));
