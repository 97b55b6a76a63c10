import { useCallback, useState } from 'react';

export interface Fix {
  latitude: number;
  longitude: number;
  /** Metres (68% confidence), as the phone reports it. */
  accuracy: number;
  at: number;
}

export type LocationState =
  | { status: 'idle' }
  | { status: 'locating'; last?: Fix }
  | { status: 'located'; fix: Fix }
  | { status: 'failed'; message: string; last?: Fix };

function messageOf(error: GeolocationPositionError): string {
  if (error.code === error.PERMISSION_DENIED) return 'Location is blocked for this site: allow it in the browser settings (site settings → Location), then try again';
  if (error.code === error.TIMEOUT) return 'The phone could not find its position in time: step outside or near a window and try again';
  return 'The phone could not find its position: turn on location (GPS) and try again';
}

/** The phone's position, asked for when `locate` is called (the browser asks the agent the first time). */
export function useLocation(initial?: Fix) {
  const [state, setState] = useState<LocationState>(initial ? { status: 'located', fix: initial } : { status: 'idle' });
  const locate = useCallback(() => {
    if (!('geolocation' in navigator)) {
      setState({ status: 'failed', message: 'This browser cannot tell its position' });
      return;
    }
    setState((previous) => ({ status: 'locating', last: previous.status === 'located' ? previous.fix : undefined }));
    navigator.geolocation.getCurrentPosition(
      (position) =>
        setState({
          status: 'located',
          fix: { latitude: position.coords.latitude, longitude: position.coords.longitude, accuracy: position.coords.accuracy, at: position.timestamp },
        }),
      (error) => setState((previous) => ({ status: 'failed', message: messageOf(error), last: previous.status === 'locating' ? previous.last : undefined })),
      { enableHighAccuracy: true, timeout: 20_000, maximumAge: 30_000 },
    );
  }, []);
  return { state, locate };
}

export function formatAccuracy(metres: number): string {
  return metres >= 1000 ? `± ${(metres / 1000).toFixed(1)} km` : `± ${Math.round(metres)} m`;
}

export function formatFix(fix: Fix): string {
  return `${fix.latitude.toFixed(5)}, ${fix.longitude.toFixed(5)} (${formatAccuracy(fix.accuracy)})`;
}
