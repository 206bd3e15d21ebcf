import type { TestApp } from './app.js';
import { CARD_WEBHOOK_SECRET } from './providers/card-driver.js';
import { FakeStripe } from './providers/fake-stripe.js';
import { setStoreActive } from './store.js';

/**
 * The card processor as checkout tests need it: a fake Stripe on 127.0.0.1 on the app's clock, whose
 * hosted Pay page delivers genuinely signed webhooks to the app at `appBaseUrl`, with the store switched
 * on and the card processor settings pointing at the fake. Stop it with `stripe.stop()`.
 */
export async function startCardCheckout(t: TestApp, appBaseUrl: string, apiKey = 'sk_test_checkout'): Promise<FakeStripe> {
  const stripe = await new FakeStripe().start();
  stripe.now = () => Math.floor(t.clock.nowMs() / 1000);
  stripe.webhook = { url: `${appBaseUrl}/api/v1/webhooks/card_processor`, secret: CARD_WEBHOOK_SECRET };
  await setStoreActive(t, true);
  for (const [k, v] of Object.entries({ card_processor_api_key: apiKey, card_processor_api_base: stripe.base, card_processor_webhook_secret: CARD_WEBHOOK_SECRET })) {
    await t.services.settings.set(k, v);
  }
  return stripe;
}

/** The test app on a real 127.0.0.1 socket (the fake provider's webhooks need one), and its base URL. */
export async function listenLocally(t: TestApp): Promise<string> {
  return (await t.app.listen({ host: '127.0.0.1', port: 0 })).replace('localhost', '127.0.0.1');
}
