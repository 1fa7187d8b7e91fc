import { Button, Group, Stack } from '@mantine/core';
import { useState, type ReactNode } from 'react';
import { ErrorAlert } from './error-alert.js';
import { fieldErrorUnder, unplacedError } from './field-errors.js';

/**
 * A create/edit form: its fields, then what the API said that no field shows
 * (the alert), then Cancel and the submit button. `placed` lists the fields
 * whose errors the form shows next to an input (their sub-fields too).
 */
export function ResourceForm({
  onSubmit,
  save,
  placed,
  submitLabel,
  submitDisabled,
  onCancel,
  cancelLabel = 'Cancel',
  children,
}: {
  onSubmit: () => void;
  /** The save mutation: its error is shown, and the submit button spins while it runs. */
  save: { error: unknown; isPending: boolean };
  placed: readonly string[];
  submitLabel: string;
  submitDisabled?: boolean;
  /** Without it the form has no Cancel button. */
  onCancel?: () => void;
  cancelLabel?: string;
  children: ReactNode;
}) {
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      <Stack>
        {children}
        <ErrorAlert error={unplacedError(save.error, placed)} />
        <Group justify="flex-end">
          {onCancel && (
            <Button variant="default" onClick={onCancel}>
              {cancelLabel}
            </Button>
          )}
          <Button type="submit" loading={save.isPending} disabled={submitDisabled}>
            {submitLabel}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/** A project's resource form: the project, the item it edits (none: it creates one), and what ends it. */
export interface ItemFormProps<T> {
  projectId: string;
  item?: T;
  onDone: () => void;
}

type StringKey<T> = { [K in keyof T]: T[K] extends string ? K : never }[keyof T];

/** A form's values as its inputs hold them, and the props that bind an input to one of them. */
export interface Fields<T> {
  values: T;
  set: (patch: Partial<T>) => void;
  /**
   * A text input (TextInput, Textarea, PasswordInput) bound to a string value,
   * with the API's message for the field of that name (or `field`) or under it.
   */
  text: (
    key: StringKey<T>,
    field?: string,
  ) => {
    value: string;
    onChange: (e: { currentTarget: { value: string } }) => void;
    error: string | undefined;
  };
  /** An input that hands its value to onChange itself (NumberInput, JsonInput, TagsInput, a nullable Select). */
  value: <K extends keyof T>(
    key: K,
    field?: string,
  ) => { value: T[K]; onChange: (v: T[K]) => void; error: string | undefined };
}

/** The state of a form's inputs; `error` (the last save's) supplies each bound input's message. */
export function useFields<T extends object>(initial: T | (() => T), error: unknown): Fields<T> {
  const [values, setValues] = useState<T>(initial);
  const set = (patch: Partial<T>) => setValues((v) => ({ ...v, ...patch }));
  const setOne = <K extends keyof T>(key: K, v: T[K]) => {
    const patch: Partial<T> = {};
    patch[key] = v;
    set(patch);
  };
  const message = (key: keyof T, field?: string) => fieldErrorUnder(error, field ?? String(key));
  return {
    values,
    set,
    text: (key, field) => ({
      value: values[key] as string,
      onChange: (e) => setOne(key, e.currentTarget.value as T[typeof key]),
      error: message(key, field),
    }),
    value: (key, field) => ({
      value: values[key],
      onChange: (v) => setOne(key, v),
      error: message(key, field),
    }),
  };
}
