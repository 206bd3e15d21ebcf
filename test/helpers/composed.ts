/**
 * Adds an item to one of the lists the roof composes at start (a vault re-sealer, a protection level
 * source, a passkey veto) for the length of a test; the returned function takes it out again.
 */
export function addForTest<T>(list: T[], item: T): () => void {
  list.push(item);
  return () => {
    const i = list.indexOf(item);
    if (i >= 0) list.splice(i, 1);
  };
}
