import { useEffect, useState } from 'react';

/**
 * Gives focus back, when the calling component unmounts, to whatever had it
 * when it first rendered (the button that opened a dialog). Mantine's Modal
 * returns focus when `opened` turns false, not when the dialog is unmounted
 * whole, as dialogs that start afresh on every opening are.
 */
export function useReturnFocus(): void {
  // Read while rendering: before the dialog's focus trap moves focus inside it.
  const [opener] = useState(() => document.activeElement);
  useEffect(
    () => () => {
      if (!(opener instanceof HTMLElement)) return;
      // After the dialog's own focus trap lets go.
      requestAnimationFrame(() => {
        if (opener.isConnected) opener.focus();
      });
    },
    [opener],
  );
}
