/**
 * A page that is loading or failed still has its heading: screen-reader users land on an h1
 * on every page, and an error is announced (role="alert") rather than found by chance.
 */
export function PageState({ title, error, busy }: { title: string; error?: string | null; busy?: string }) {
  return (
    <>
      <h1>{title}</h1>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : (
        <p aria-busy="true">{busy ?? "Loading…"}</p>
      )}
    </>
  );
}
