import Joi from 'joi';
import { BUDGET_PERIODS } from '../../core/budgets/types.js';

/**
 * An agent's or a conversation's budget: what its turns may spend per
 * period (the key budgets' periods), on top of the project's virtual key.
 * A call that does not fit makes its run wait (`awaiting_budget`).
 */
export const scopeBudget = Joi.object({
  max_usd: Joi.number().min(0).max(1e9).required(),
  max_tokens: Joi.number().integer().min(1).max(1e15).allow(null),
  period: Joi.string()
    .valid(...BUDGET_PERIODS)
    .required(),
  alert_at: Joi.number()
    .greater(0)
    .max(1)
    .allow(null)
    .description('the share of the budget whose crossing fires budget.threshold (default 0.8)'),
})
  .allow(null)
  .description('what turns may spend per period, beside the project key; a call that does not fit waits');
