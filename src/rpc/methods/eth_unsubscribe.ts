import { defineMethod } from '../method.ts';

/** eth_unsubscribe: over WebSocket only; the connection's subscription hub (subscriptions/hub.ts) answers. */
export const eth_unsubscribe = defineMethod({
  name: 'eth_unsubscribe',
  transports: ['ws'],
  handler: (params, ctx) => ctx.subscriptions!(params),
});
