using System.Runtime.CompilerServices;
using System.Threading;

namespace Falconet.Http;

/// <summary>
/// Keeps what a handler does to the execution context inside its request: after every call to the application the
/// connection's code goes back to the context the connection started with, so the next request (and on HTTP/2 the next
/// stream) starts from it too. Without this, an <see cref="AsyncLocal{T}"/> that a handler sets before it returns, finished
/// or not, stays with the connection's code and flows into the next request: ASP.NET Core's hosting sets
/// <c>Activity.Current</c> and a logging scope that way for every request, and each request's activity then had the
/// previous one as its parent, a chain that kept every request's activity, scope and state alive for as long as the loop
/// ran (the heap grew without bound under HTTP/2 load).
/// </summary>
/// <remarks>
/// An <c>async</c> handler gets this from its method builder; a synchronous one (an adapter, a handler that returns a
/// task it did not await) does not. The context is captured once per connection (<see cref="Capture"/>) and put back with
/// one call per request, which does nothing when the handler changed nothing.
/// </remarks>
internal static class HandlerExecutionContext
{
    /// <summary>The context a connection's requests start from (null while flow is suppressed: nothing then flows).</summary>
    public static ExecutionContext? Capture() => ExecutionContext.Capture();

    /// <summary>Puts back <paramref name="connectionContext"/> after a call to the application.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void Restore(ExecutionContext? connectionContext)
    {
        if (connectionContext is not null)
        {
            ExecutionContext.Restore(connectionContext);
        }
    }
}
