import { z } from 'zod';
import { defineMethod } from '../method.ts';

/**
 * eth_subscribe `[kind, ...options]`: over WebSocket only; the connection's subscription hub
 * (subscriptions/hub.ts) answers. The kind names the rest: each kind's schema parses the whole
 * params (subscriptions/kinds/), and which kinds are offered depends on the feed.
 */
export const eth_subscribe = defineMethod({
  name: 'eth_subscribe',
  transports: ['ws'],
  params: z.array(z.unknown()),
  handler: (params, ctx) => ctx.subscriptions!.subscribe(params),
});
