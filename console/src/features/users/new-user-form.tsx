import { PasswordInput, Select, TextInput } from '@mantine/core';
import type { OrgRole } from '../../api/types.js';
import { ResourceForm, useFields } from '../../components/resource-form.js';
import { ORG_ROLES, useCreateUser } from './queries.js';

interface Draft {
  user_name: string;
  display_name: string;
  email: string;
  org_role: OrgRole;
  password: string;
}

/** A new user: their name, organisation role and, for password sign-in, a first password. */
export function NewUserForm({ onDone }: { onDone: () => void }) {
  const save = useCreateUser();
  const f = useFields<Draft>(
    { user_name: '', display_name: '', email: '', org_role: 'member', password: '' },
    save.error,
  );
  const submit = () => {
    const v = f.values;
    save.mutate(
      {
        user_name: v.user_name.trim(),
        display_name: v.display_name.trim() || null,
        email: v.email.trim() || null,
        org_role: v.org_role,
        ...(v.password ? { password: v.password } : {}),
      },
      { onSuccess: onDone },
    );
  };
  return (
    <ResourceForm
      onSubmit={submit}
      save={save}
      placed={['user_name', 'display_name', 'email', 'org_role', 'password']}
      submitLabel="Create user"
      onCancel={onDone}
    >
      <TextInput label="User name" required data-autofocus {...f.text('user_name')} />
      <TextInput label="Display name" {...f.text('display_name')} />
      <TextInput label="Email" type="email" {...f.text('email')} />
      <Select
        label="Organisation role"
        description="Owners and admins manage everything; members only the projects they are given a role in."
        data={[...ORG_ROLES]}
        allowDeselect={false}
        {...f.value('org_role')}
        onChange={(v) => v && f.set({ org_role: v })}
      />
      <PasswordInput
        label="Password"
        description="For signing in with a password; leave empty for single sign-on only."
        autoComplete="new-password"
        {...f.text('password')}
      />
    </ResourceForm>
  );
}
