// The light build (what @octokit/plugin-throttling uses) has the full build's API.
declare module 'bottleneck/light.js' {
  import Bottleneck from 'bottleneck'
  export default Bottleneck
}
