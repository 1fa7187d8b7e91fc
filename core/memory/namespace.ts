/** How a namespace label must look: the Agent Protocol's clients join labels with dots (`a.b`) in queries. */
export const NAMESPACE_LABEL_RULE = 'namespace labels cannot be empty or contain periods (".")';

/** Whether a label may be part of a namespace. */
export const validLabel = (label: unknown): label is string =>
  typeof label === 'string' && label !== '' && !label.includes('.');
