import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type GrpcRetryOptions } from '@temporalio/client';

/** grpc-js's words for a failed TLS handshake, in `14 UNAVAILABLE: … Last error: <reason>`. */
const TLS_FAILURE = /SSL routines|SSL alert number|certificate/i;

/**
 * The SDK's default retries, except for TLS failures: a wrong CA or a missing
 * client certificate does not heal within a call's deadline, and retrying it
 * turns the reason ("alert certificate required") into a bare
 * DEADLINE_EXCEEDED, which is all readiness would then report.
 */
export function temporalClientRetryInterceptors(): Array<ReturnType<typeof makeGrpcRetryInterceptor>> {
  const defaults = defaultGrpcRetryOptions();
  const retryableDecider: GrpcRetryOptions['retryableDecider'] = (attempt, status) =>
    !TLS_FAILURE.test(status.details) && defaults.retryableDecider(attempt, status);
  return [makeGrpcRetryInterceptor({ ...defaults, retryableDecider })];
}
