import { describe, expect, it } from 'vitest';
import { ConnectionMutex } from '../../src/db/pglite-dialect.js';

/** A clock the test moves: each holder "runs" for as long as it says. */
function manualClock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the embedded database connection mutex', () => {
  it('hands the connection over in arrival order', async () => {
    const mutex = new ConnectionMutex(1_000, manualClock().now);
    const order: number[] = [];
    const first = await mutex.lock();
    const waiters = [1, 2, 3].map((n) =>
      mutex.lock().then((release) => {
        order.push(n);
        release();
      }),
    );
    const late = mutex.lock().then((release) => {
      order.push(4);
      release();
    });
    first();
    await Promise.all([...waiters, late]);
    expect(order).toEqual([1, 2, 3, 4]);
  });

  it('within the budget, passes the connection on in the same turn', async () => {
    const mutex = new ConnectionMutex(8, manualClock().now);
    const events: string[] = [];
    const first = await mutex.lock();
    const second = mutex.lock().then((release) => {
      events.push('second');
      release();
    });
    setImmediate(() => events.push('event loop turn'));
    first();
    await second;
    expect(events).toEqual(['second']);
  });

  it('past the budget, lets the event loop turn before the next holder, and still serves every waiter in order', async () => {
    const clock = manualClock();
    const mutex = new ConnectionMutex(8, clock.now);
    const events: string[] = [];
    const first = await mutex.lock();
    const waiters = ['a', 'b'].map((name) =>
      mutex.lock().then((release) => {
        events.push(name);
        clock.advance(10);
        release();
      }),
    );
    setImmediate(() => events.push('event loop turn'));
    clock.advance(10);
    first();
    await Promise.all(waiters);
    expect(events[0]).toBe('event loop turn');
    expect(events.filter((e) => e !== 'event loop turn')).toEqual(['a', 'b']);
  });

  it('makes a newcomer wait its turn once the budget is used, even with the connection free', async () => {
    const clock = manualClock();
    const mutex = new ConnectionMutex(8, clock.now);
    const events: string[] = [];
    (await mutex.lock())();
    clock.advance(10);
    setImmediate(() => events.push('event loop turn'));
    const newcomer = mutex.lock().then((release) => {
      events.push('newcomer');
      release();
    });
    await newcomer;
    expect(events).toEqual(['event loop turn', 'newcomer']);
    // A new turn starts a new budget: the next lock is granted at once.
    await nextTurn();
    let granted = false;
    const release = await mutex.lock().then((r) => ((granted = true), r));
    expect(granted).toBe(true);
    release();
  });
});
