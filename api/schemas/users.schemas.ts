import Joi from 'joi';
import type { OrgRole, ProjectRole } from '../../core/auth/roles.js';
import { idParams, pagination, timestamp, uuid } from './common.schemas.js';
import {
  displayName,
  email,
  orgRole,
  password,
  projectRole,
  userName,
  userResponse,
} from './auth.schemas.js';

export const userList = {
  query: Joi.object({
    ...pagination,
    user_name: Joi.string().trim().min(1).max(256).description('users whose name contains this (any case)'),
    active: Joi.boolean(),
  }),
};
export const userCreate = {
  body: Joi.object({
    user_name: userName.required(),
    display_name: displayName,
    email,
    org_role: orgRole.default('member'),
    password: password.description('none: the user signs in by single sign-on only'),
  }).required(),
};
export const userGet = { params: idParams };
export const userUpdate = {
  params: idParams,
  body: Joi.object({
    display_name: displayName,
    email,
    org_role: orgRole,
    active: Joi.boolean().description('false: signed out everywhere, and every token of theirs refused'),
    password: password.allow(null).description('null removes it (single sign-on only)'),
  })
    .min(1)
    .required(),
};
export const userDelete = { params: idParams };
export const userListResponse = Joi.array().items(userResponse);

export interface UserListQuery {
  limit: number;
  offset: number;
  user_name?: string;
  active?: boolean;
}
export interface UserCreateBody {
  user_name: string;
  display_name?: string | null;
  email?: string | null;
  org_role: OrgRole;
  password?: string;
}
export interface UserUpdateBody {
  display_name?: string | null;
  email?: string | null;
  org_role?: OrgRole;
  active?: boolean;
  password?: string | null;
}

const memberParams = Joi.object({ id: uuid.required(), user_id: uuid.required() });
export const memberList = { params: idParams };
export const memberPut = {
  params: memberParams,
  body: Joi.object({ role: projectRole.required() }).required(),
};
export const memberDelete = { params: memberParams };

export const memberResponse = Joi.object({
  user_id: uuid,
  user_name: Joi.string(),
  display_name: Joi.string().allow(null),
  role: projectRole,
  created_at: timestamp,
  updated_at: timestamp,
});
export const memberListResponse = Joi.array().items(memberResponse);

export interface MemberPutBody {
  role: ProjectRole;
}
