using System;
using System.Threading;

namespace Falconet.Transport;

/// <summary>A delegate run on a transport's loop thread (binding and closing listeners: rare, so a closure is fine).</summary>
internal sealed class LoopAction(Action action) : IThreadPoolWorkItem
{
    public void Execute() => action();
}
