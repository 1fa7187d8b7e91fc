import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.js';
import type { Member, ProjectRole, User, UserBody, UserPatch } from '../../api/types.js';
import { useSaving } from '../config/shared/queries.js';

export const ORG_ROLES = ['owner', 'admin', 'member'] as const;
export const PROJECT_ROLES: { value: ProjectRole; label: string }[] = [
  { value: 'viewer', label: 'Viewer: reads' },
  { value: 'operator', label: 'Operator: runs, decisions, approvals' },
  { value: 'developer', label: 'Developer: agents, prompts, evals…' },
  { value: 'admin', label: 'Admin: the project, its members and models' },
];

const USERS = ['users'];

/** The organisation's users (the newest 200); org admins only. */
export function useUsers(enabled = true) {
  return useQuery({
    queryKey: USERS,
    enabled,
    queryFn: () => unwrap<User[]>(api.GET('/api/agent-server/users', { params: { query: { limit: 200 } } })),
  });
}

export function useCreateUser() {
  return useSaving([USERS], (body: UserBody) => unwrap<User>(api.POST('/api/agent-server/users', { body })));
}

export function useUpdateUser() {
  return useSaving([USERS], ({ id, ...body }: UserPatch & { id: string }) =>
    unwrap<User>(api.PATCH('/api/agent-server/users/{id}', { params: { path: { id } }, body })),
  );
}

export function useDeleteUser() {
  return useSaving([USERS], (id: string) =>
    unwrap(api.DELETE('/api/agent-server/users/{id}', { params: { path: { id } } })),
  );
}

const membersKey = (projectId: string) => ['members', projectId];

export function useMembers(projectId: string) {
  return useQuery({
    queryKey: membersKey(projectId),
    queryFn: () =>
      unwrap<Member[]>(
        api.GET('/api/agent-server/projects/{id}/members', { params: { path: { id: projectId } } }),
      ),
  });
}

export function useSetMember(projectId: string) {
  return useSaving([membersKey(projectId)], ({ userId, role }: { userId: string; role: ProjectRole }) =>
    unwrap<Member>(
      api.PUT('/api/agent-server/projects/{id}/members/{user_id}', {
        params: { path: { id: projectId, user_id: userId } },
        body: { role },
      }),
    ),
  );
}

export function useRemoveMember(projectId: string) {
  return useSaving([membersKey(projectId)], (userId: string) =>
    unwrap(
      api.DELETE('/api/agent-server/projects/{id}/members/{user_id}', {
        params: { path: { id: projectId, user_id: userId } },
      }),
    ),
  );
}
