/** Remote A2A agents as tools, their tool timelines forwarded live into the calling run. */
export {
  remoteAgentTool,
  readRemoteAgentCard,
  describeFromCard,
  DEFAULT_REMOTE_TIMEOUT_MS,
  type RemoteAgentToolOptions,
} from './remote-agent.tool';
export { DELEGATION_METADATA_KEY, DEFAULT_MAX_DELEGATION_DEPTH, delegationOf, type Delegation } from './delegation';
