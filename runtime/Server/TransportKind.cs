namespace Falconet.Server;

/// <summary>Which transport a <see cref="FalconetServer"/> accepts connections with.</summary>
public enum TransportKind
{
    /// <summary>System.Net.Sockets with reusable awaitables, one I/O lane (thread and pool) per configured thread.</summary>
    Sockets = 0,

    /// <summary>libuv loop threads (not available in this build; selecting it fails at start).</summary>
    Libuv = 1,
}
