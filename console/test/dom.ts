import { screen, within } from '@testing-library/react';

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * An input by its label's text (a required input's label ends with " *"), in
 * `scope` or the page; a select's list of options, labelled the same, is not one.
 */
export function input(text: string, scope?: HTMLElement): HTMLInputElement {
  const q = scope ? within(scope) : screen;
  const all = q.getAllByLabelText(new RegExp(`^${escape(text)}( \\*)?$`));
  const inputs = all.filter((el) => el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement);
  if (inputs.length !== 1) throw new Error(`${inputs.length} inputs labelled ${text}`);
  return inputs[0] as HTMLInputElement;
}

/** What an input is described by: its description and, when it has one, its error. */
export function describedBy(el: HTMLElement): string {
  const ids = (el.getAttribute('aria-describedby') ?? '').split(/\s+/).filter(Boolean);
  return ids.map((id) => document.getElementById(id)?.textContent ?? '').join(' | ');
}
