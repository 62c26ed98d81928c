import { useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "./api.js";

export type Loaded<T> = { state: "loading" } | { state: "error"; error: string } | { state: "ok"; value: T };

/** Runs `load` when `key` changes; a stale answer (the key moved on) is dropped. */
export function useLoad<T>(load: () => Promise<T>, key: string): [Loaded<T>, () => void] {
  const [result, setResult] = useState<Loaded<T>>({ state: "loading" });
  const [tick, setTick] = useState(0);
  const shownKey = useRef<string | null>(null);
  useEffect(() => {
    let live = true;
    // A reload of the same key keeps what is shown until the new answer comes (a live view does not flicker).
    if (shownKey.current !== key) setResult({ state: "loading" });
    shownKey.current = key;
    load().then(
      (value) => live && setResult({ state: "ok", value }),
      (err: unknown) => live && setResult({ state: "error", error: errorText(err) }),
    );
    return () => {
      live = false;
    };
  }, [key, tick]);
  return [result, () => setTick((t) => t + 1)];
}
