using System;
using System.Runtime.CompilerServices;
using System.Threading;
using Falconet.Transport;

namespace Falconet.Http;

/// <summary>
/// An awaitable that resumes the connection's code on its I/O thread through <see cref="TransportConnection.Schedule"/>
/// (for libuv, the loop's queue and <c>uv_async_send</c>). One per connection, reused: awaiting it allocates nothing,
/// since an async method hands over its cached continuation delegate.
/// </summary>
internal sealed class IoThreadReturn : IThreadPoolWorkItem, ICriticalNotifyCompletion
{
    private readonly TransportConnection _transport;
    private Action? _continuation;

    public IoThreadReturn(TransportConnection transport)
    {
        _transport = transport;
    }

    /// <summary>Awaited by the connection loop; always yields to the I/O thread (check <see cref="TransportConnection.IsOnIoThread"/> first).</summary>
    public IoThreadReturn Return() => this;

    public IoThreadReturn GetAwaiter() => this;

    public bool IsCompleted => false;

    public void GetResult()
    {
    }

    public void OnCompleted(Action continuation) => UnsafeOnCompleted(continuation);

    public void UnsafeOnCompleted(Action continuation)
    {
        _continuation = continuation;
        _transport.Schedule(this);
    }

    void IThreadPoolWorkItem.Execute()
    {
        Action continuation = _continuation!;
        _continuation = null;
        continuation();
    }
}
