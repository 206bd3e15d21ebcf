import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { changeRows, createTier, type TestTier } from '../helpers/tiers.js';

const HOUR = 3600;

describe('the hosted relay fleet (mailbox/fleet_enroll, mailbox/fleet_status, task mailbox_fleet_recheck)', () => {
  let t: TestApp;
  let withSlot: TestTier;
  let withoutSlot: TestTier;

  const action = (headers: Record<string, string>, name: string, payload: Record<string, unknown> = {}) =>
    t.request({ method: 'POST', url: `/api/v1/action/mailbox/${name}`, headers, payload });

  /** A member with a key, on the given tier (or tierless). */
  async function member(tier: TestTier | null) {
    const m = await t.keyHeaders();
    if (tier) await t.services.tiers.membership.assignManually(m.userId, tier.tierId, null);
    return m;
  }

  const recheck = async () => {
    const [outcome] = await t.services.scheduler.runNow('mailbox_fleet_recheck');
    return outcome as { task: string; result: Record<string, number> };
  };

  const fleetChanges = async (userId: number) =>
    (await changeRows(t, userId))
      .filter((r) => r.cht_entity_type === 'mailbox_fleet_slot')
      .map((r) => ({ field: r.cht_field_name, from: r.cht_old_value, to: r.cht_new_value, reason: r.cht_change_reason }));

  beforeAll(async () => {
    t = await createTestApp();
    withSlot = await createTier(t, { level: 20, features: { mailbox_fleet_slot: true, mailbox_fleet_max_domains: 2 } });
    withoutSlot = await createTier(t, { level: 10, features: { mailbox_fleet_slot: false, mailbox_fleet_max_domains: 5 } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('declares its tier features with the types the contract gives', () => {
    expect(t.services.tiers.registry.get('mailbox_fleet_slot')).toMatchObject({ key: 'mailbox_fleet_slot', type: 'boolean' });
    expect(t.services.tiers.registry.get('mailbox_fleet_max_domains')).toMatchObject({ key: 'mailbox_fleet_max_domains', type: 'integer' });
  });

  it('while the plugin is inactive, both actions are the 404 of an unknown action and the re-check does not run', async () => {
    const m = await member(withSlot);
    const unknown = await action(m.headers, 'no_such_action');
    for (const name of ['fleet_enroll', 'fleet_status']) {
      const res = await action(m.headers, name, { domains: ['example.com'] });
      expect(res.statusCode, name).toBe(404);
      expect(res.json.errortype).toBe(unknown.json.errortype);
      expect(res.json.error).toBe(unknown.json.error.replace('no_such_action', name));
    }
    expect(await recheck()).toEqual({ task: 'mailbox_fleet_recheck', skipped: 'plugin_inactive', plugin: 'mailbox' });
    const listed = await t.request({ method: 'GET', url: '/api/v1/actions' });
    expect(listed.json.data['mailbox/fleet_enroll']).toBeUndefined();
    expect(listed.json.data['mailbox/fleet_status']).toBeUndefined();
  });

  describe('with the plugin active', () => {
    beforeAll(async () => {
      await t.services.plugins.setActive('mailbox', true);
    });

    it('GET /actions publishes both actions with their descriptors', async () => {
      const listed = (await t.request({ method: 'GET', url: '/api/v1/actions' })).json.data;
      expect(listed['mailbox/fleet_enroll']).toMatchObject({ requires_session: true, has_form: false, input: { domains: { type: 'array', required: true } } });
      expect(listed['mailbox/fleet_status']).toMatchObject({ requires_session: true, has_form: false, input: null });
    });

    it('refuses enrollment without the slot: tierless, or a tier whose mailbox_fleet_slot is false (422 ActionError)', async () => {
      for (const tier of [null, withoutSlot]) {
        const m = await member(tier);
        const res = await action(m.headers, 'fleet_enroll', { domains: ['nope.example.com'] });
        expect(res.statusCode).toBe(422);
        expect(res.json.errortype).toBe('ActionError');
        expect(res.json.data).toEqual({ reason: 'fleet_slot_unavailable' });
        const status = await action(m.headers, 'fleet_status');
        expect(status.statusCode).toBe(200);
        expect(status.json.data).toEqual({
          enrolled: false,
          slot: null,
          features: tier ? { mailbox_fleet_slot: false, mailbox_fleet_max_domains: 5 } : { mailbox_fleet_slot: false, mailbox_fleet_max_domains: 0 },
        });
        expect(await fleetChanges(m.userId)).toEqual([]);
      }
    });

    it('allows enrollment with the slot, up to mailbox_fleet_max_domains domains, and records it', async () => {
      const m = await member(withSlot);
      const tooMany = await action(m.headers, 'fleet_enroll', { domains: ['a.example.com', 'b.example.com', 'c.example.com'] });
      expect(tooMany.statusCode).toBe(422);
      expect(tooMany.json.errortype).toBe('ActionError');
      expect(tooMany.json.data).toEqual({ reason: 'fleet_domain_limit', max_domains: 2, requested: 3 });

      const malformed = await action(m.headers, 'fleet_enroll', { domains: ['not a domain'] });
      expect(malformed.statusCode).toBe(422);
      expect(malformed.json.errortype).toBe('ValidationError');
      expect(Object.keys(malformed.json.validation_errors)).toEqual(['domains']);

      const missing = await action(m.headers, 'fleet_enroll', {});
      expect(missing.statusCode).toBe(422);
      expect(missing.json.errortype).toBe('ValidationError');

      const res = await action(m.headers, 'fleet_enroll', { domains: ['Mail.Example.com', 'second.example.org', 'mail.example.com'] });
      expect(res.statusCode).toBe(200);
      expect(res.json.data).toEqual({
        enrolled: true,
        slot: {
          slot_id: expect.any(Number),
          status: 'active',
          domains: ['mail.example.com', 'second.example.org'],
          enrolled_time: '2026-03-01 12:00:00',
          grace_start_time: null,
          grace_end_time: null,
          suspended_time: null,
          last_check_time: '2026-03-01 12:00:00',
        },
        features: { mailbox_fleet_slot: true, mailbox_fleet_max_domains: 2 },
      });
      const status = await action(m.headers, 'fleet_status');
      expect(status.json.data).toEqual(res.json.data);
      expect(await fleetChanges(m.userId)).toEqual([{ field: 'mfs_status', from: null, to: 'active', reason: 'fleet_enrolled' }]);

      // Enrolling again replaces the domains of the same slot.
      const again = await action(m.headers, 'fleet_enroll', { domains: ['only.example.net'] });
      expect(again.statusCode).toBe(200);
      expect(again.json.data.slot).toMatchObject({ slot_id: res.json.data.slot.slot_id, domains: ['only.example.net'] });

      // A domain belongs to one customer.
      const other = await member(withSlot);
      const taken = await action(other.headers, 'fleet_enroll', { domains: ['only.example.net'] });
      expect(taken.statusCode).toBe(422);
      expect(taken.json.data).toEqual({ reason: 'domain_taken', domain: 'only.example.net' });
    });

    it('suspends a slot whose tier lost the feature only after mailbox_fleet_grace_hours, and restores it when the feature returns', async () => {
      const m = await member(withSlot);
      expect((await action(m.headers, 'fleet_enroll', { domains: ['grace.example.com'] })).statusCode).toBe(200);
      const slotStatus = async () => (await action(m.headers, 'fleet_status')).json.data.slot;

      // The tier keeps the slot: nothing changes.
      expect((await recheck()).result).toMatchObject({ grace_started: 0, suspended: 0, restored: 0 });
      expect((await slotStatus()).status).toBe('active');

      await t.services.tiers.membership.assignManually(m.userId, withoutSlot.tierId, null);
      const lapsedAt = t.clock.now();
      expect((await recheck()).result).toMatchObject({ grace_started: 1, suspended: 0 });
      expect(await slotStatus()).toMatchObject({ status: 'grace', grace_start_time: '2026-03-01 12:00:00', grace_end_time: '2026-03-04 12:00:00', suspended_time: null });
      // In the grace window the customer cannot enroll more (the tier has no slot now).
      expect((await action(m.headers, 'fleet_enroll', { domains: ['grace.example.com'] })).json.data).toEqual({ reason: 'fleet_slot_unavailable' });

      t.clock.set(new Date(lapsedAt.getTime() + 72 * HOUR * 1000 - 1000));
      expect((await recheck()).result).toMatchObject({ suspended: 0 });
      expect((await slotStatus()).status).toBe('grace');

      t.clock.advanceSeconds(1);
      expect((await recheck()).result).toMatchObject({ suspended: 1 });
      expect(await slotStatus()).toMatchObject({ status: 'suspended', grace_start_time: null, grace_end_time: null, suspended_time: '2026-03-04 12:00:00' });

      t.clock.advanceSeconds(5 * HOUR);
      await t.services.tiers.membership.assignManually(m.userId, withSlot.tierId, null);
      expect((await recheck()).result).toMatchObject({ restored: 1 });
      expect(await slotStatus()).toMatchObject({ status: 'active', suspended_time: null, domains: ['grace.example.com'] });

      expect(await fleetChanges(m.userId)).toEqual([
        { field: 'mfs_status', from: null, to: 'active', reason: 'fleet_enrolled' },
        { field: 'mfs_status', from: 'active', to: 'grace', reason: 'fleet_grace_started' },
        { field: 'mfs_status', from: 'grace', to: 'suspended', reason: 'fleet_suspended' },
        { field: 'mfs_status', from: 'suspended', to: 'active', reason: 'fleet_restored' },
      ]);
    });

    it('a slot whose feature comes back within the grace window is restored without ever being suspended', async () => {
      const start = t.clock.now();
      const m = await member(withSlot);
      expect((await action(m.headers, 'fleet_enroll', { domains: ['back.example.com'] })).statusCode).toBe(200);
      await t.services.tiers.membership.assignManually(m.userId, null, null);
      await recheck();
      expect((await action(m.headers, 'fleet_status')).json.data.slot.status).toBe('grace');
      t.clock.set(new Date(start.getTime() + 71 * HOUR * 1000));
      await t.services.tiers.membership.assignManually(m.userId, withSlot.tierId, null);
      await recheck();
      t.clock.set(new Date(start.getTime() + 100 * HOUR * 1000));
      await recheck();
      expect((await action(m.headers, 'fleet_status')).json.data.slot).toMatchObject({ status: 'active', grace_start_time: null, suspended_time: null });
      expect((await fleetChanges(m.userId)).map((c) => c.reason)).toEqual(['fleet_enrolled', 'fleet_grace_started', 'fleet_restored']);
    });

    it('the grace window follows the setting mailbox_fleet_grace_hours', async () => {
      await t.services.settings.set('mailbox_fleet_grace_hours', 1);
      try {
        const m = await member(withSlot);
        expect((await action(m.headers, 'fleet_enroll', { domains: ['short.example.com'] })).statusCode).toBe(200);
        await t.services.tiers.membership.assignManually(m.userId, withoutSlot.tierId, null);
        await recheck();
        t.clock.advanceSeconds(HOUR);
        await recheck();
        expect((await action(m.headers, 'fleet_status')).json.data.slot.status).toBe('suspended');
      } finally {
        await t.services.settings.set('mailbox_fleet_grace_hours', 72);
      }
    });
  });
});
