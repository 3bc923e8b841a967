import { defineMethod } from '../method.ts';

/** eth_subscribe: over WebSocket only; the connection's subscription hub (subscriptions/hub.ts) answers. */
export const eth_subscribe = defineMethod({
  name: 'eth_subscribe',
  transports: ['ws'],
  handler: (params, ctx) => ctx.subscriptions!(params),
});
