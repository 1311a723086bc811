/** Appends `value` to the array stored under `key` on a method (decorators may be stacked). @internal */
export function appendMetadata(key: string, value: unknown, descriptor: PropertyDescriptor): void {
  const target = descriptor.value as object;
  const list = (Reflect.getOwnMetadata(key, target) as unknown[] | undefined) ?? [];
  Reflect.defineMetadata(key, [...list, value], target);
}
