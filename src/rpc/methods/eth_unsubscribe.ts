import { z } from 'zod';
import { defineMethod } from '../method.ts';
import { required } from '../params.ts';

/** eth_unsubscribe(id): over WebSocket only; the connection's subscription hub (subscriptions/hub.ts) answers. */
export const eth_unsubscribe = defineMethod({
  name: 'eth_unsubscribe',
  transports: ['ws'],
  params: z.tuple([required('a subscription id', z.string({ error: 'expected a subscription id' }))]).rest(z.unknown()),
  handler: ([id], ctx) => ctx.subscriptions!.unsubscribe(id),
});
