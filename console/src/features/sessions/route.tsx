import { Route, Routes } from 'react-router';
import { ConversationPage } from './conversation-page.js';
import { SessionList } from './session-list.js';

/** Sessions: /sessions (conversations with filters) and /sessions/<conversation_id> (runs and transcript). */
export function Component() {
  return (
    <Routes>
      <Route index element={<SessionList />} />
      <Route path="*" element={<ConversationPage />} />
    </Routes>
  );
}
