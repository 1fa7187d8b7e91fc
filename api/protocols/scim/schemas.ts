import { GROUP_SCHEMA, USER_SCHEMA } from './urns.js';

/** One attribute's definition as RFC 7643 §7 describes it, from what differs from the usual. */
interface Attribute {
  name: string;
  type: 'string' | 'boolean' | 'complex' | 'reference';
  multiValued: boolean;
  description: string;
  required: boolean;
  caseExact: boolean;
  mutability: 'readOnly' | 'readWrite' | 'immutable';
  returned: 'always' | 'default';
  uniqueness: 'none' | 'server';
  subAttributes?: Attribute[];
  referenceTypes?: string[];
}

const attr = (name: string, description: string, more: Partial<Attribute> = {}): Attribute => ({
  name,
  type: 'string',
  multiValued: false,
  description,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...more,
});

/**
 * The attributes kept here, and only those: the users table has one display
 * name and one email, so `name` is its formatted form and `emails` one
 * primary address; anything else a User carries is accepted and not kept.
 */
const USER_ATTRIBUTES: Attribute[] = [
  attr('userName', 'Unique identifier for the user, used to sign in; compared case-insensitively.', {
    required: true,
    uniqueness: 'server',
  }),
  attr('name', 'The name, kept as its formatted form (the display name).', {
    type: 'complex',
    subAttributes: [
      attr('formatted', 'The full name.'),
      attr('givenName', 'Given name: makes the display name when none is given; not kept on its own.'),
      attr('familyName', 'Family name: makes the display name when none is given; not kept on its own.'),
    ],
  }),
  attr('displayName', 'The name shown in the console and the audit log.'),
  attr('emails', 'Email addresses; the primary one (else the first) is kept.', {
    type: 'complex',
    multiValued: true,
    subAttributes: [
      attr('value', 'The address.'),
      attr('type', 'work, home or other.'),
      attr('primary', 'The address kept.', { type: 'boolean' }),
    ],
  }),
  attr('active', 'false deactivates: sessions end and API tokens are refused from the next request on.', {
    type: 'boolean',
  }),
  attr('groups', 'The groups the user is a member of; changed through Groups.', {
    type: 'complex',
    multiValued: true,
    mutability: 'readOnly',
    subAttributes: [
      attr('value', 'The group id.', { mutability: 'readOnly' }),
      attr('$ref', 'The group URI.', {
        type: 'reference',
        referenceTypes: ['Group'],
        mutability: 'readOnly',
      }),
      attr('display', 'The group displayName.', { mutability: 'readOnly' }),
    ],
  }),
];

const GROUP_ATTRIBUTES: Attribute[] = [
  attr('displayName', 'The group name, which AUTH_GROUP_ROLES maps to roles (compared exactly).', {
    required: true,
    caseExact: true,
    uniqueness: 'server',
  }),
  attr('members', 'Users in the group.', {
    type: 'complex',
    multiValued: true,
    subAttributes: [
      attr('value', 'The user id.', { mutability: 'immutable' }),
      attr('$ref', 'The user URI.', { type: 'reference', referenceTypes: ['User'], mutability: 'immutable' }),
      attr('display', 'The userName.', { mutability: 'readOnly' }),
      attr('type', 'User.', { mutability: 'immutable' }),
    ],
  }),
];

export const SCHEMAS = [
  { id: USER_SCHEMA, name: 'User', description: 'User Account', attributes: USER_ATTRIBUTES },
  { id: GROUP_SCHEMA, name: 'Group', description: 'Group', attributes: GROUP_ATTRIBUTES },
];

export const RESOURCE_TYPES = [
  { id: 'User', name: 'User', endpoint: '/Users', description: 'User Account', schema: USER_SCHEMA },
  { id: 'Group', name: 'Group', endpoint: '/Groups', description: 'Group', schema: GROUP_SCHEMA },
];
