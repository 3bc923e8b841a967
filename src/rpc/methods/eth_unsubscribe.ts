import { z } from 'zod';
import type { IssueParams } from '../../schemas/issue.ts';
import { defineMethod } from '../method.ts';
import { required } from '../params.ts';

/** A subscription id: any string (one this connection does not hold answers false); what came is shown whole. */
const subscriptionId = z
  .unknown()
  .check((ctx) => {
    if (typeof ctx.value === 'string') return;
    const got = JSON.stringify(ctx.value) ?? 'nothing';
    ctx.issues.push({ code: 'custom', message: 'expected a subscription id', input: ctx.value, params: { got } satisfies IssueParams });
  })
  .transform((id) => id as string);

/** eth_unsubscribe(id): over WebSocket only; the connection's subscription hub (subscriptions/hub.ts) answers. */
export const eth_unsubscribe = defineMethod({
  name: 'eth_unsubscribe',
  transports: ['ws'],
  params: z.tuple([required('a subscription id', subscriptionId)]).rest(z.unknown()),
  handler: ([id], ctx) => ctx.subscriptions!.unsubscribe(id),
});
