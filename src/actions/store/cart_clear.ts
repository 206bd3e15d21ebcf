import { defineAction } from '../define.js';

export default defineAction({
  name: 'cart_clear',
  description: 'Empty the cart (website sessions, guests included)',
  mutates: true,
  auth: { allow_guest: true, requires_browser_session: true, session_write: true },
  async run({ session }) {
    session!.cart = [];
    return { data: { items: [], item_count: 0 }, message: 'Your cart is empty.', redirect: '/cart' };
  },
});
