/**
 * The browser as the console's components need it, in jsdom: what Mantine
 * asks of the window, and an API answered by `fake-api.ts` instead of the
 * network (installed before the client module captures fetch).
 */
import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';
import { installFakeApi, resetFakeApi } from './fake-api.js';

// Mantine reads the colour scheme and breakpoints through matchMedia, and sizes some inputs with
// ResizeObserver; jsdom has neither. Combobox options scroll into view.
window.matchMedia = (query: string) =>
  ({
    matches: false,
    media: query,
    onchange: null,
    addEventListener: () => {},
    removeEventListener: () => {},
    addListener: () => {},
    removeListener: () => {},
    dispatchEvent: () => false,
  }) as MediaQueryList;
window.ResizeObserver = class {
  observe() {}
  unobserve() {}
  disconnect() {}
};
Element.prototype.scrollIntoView = () => {};
// Autosized textareas measure again when web fonts load.
Object.defineProperty(document, 'fonts', {
  value: { addEventListener: () => {}, removeEventListener: () => {}, ready: Promise.resolve() },
});

installFakeApi();

afterEach(() => {
  cleanup();
  resetFakeApi();
});
