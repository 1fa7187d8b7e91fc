import type { CSSProperties } from 'react';
import { colourVar, serviceColour } from './services.js';

/** A service's colour as a dot, the same on every traces page. */
export function ServiceDot({
  service,
  size = 8,
  style,
}: {
  service: string | undefined;
  size?: number;
  style?: CSSProperties;
}) {
  return (
    <span
      style={{
        display: 'inline-block',
        width: size,
        height: size,
        borderRadius: size / 2,
        background: colourVar(serviceColour(service)),
        ...style,
      }}
    />
  );
}
