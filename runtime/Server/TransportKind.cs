namespace Falconet.Server;

/// <summary>Which transport a <see cref="FalconetServer"/> accepts connections with.</summary>
public enum TransportKind
{
    /// <summary>System.Net.Sockets with reusable awaitables, connections spread over one pool per configured thread.</summary>
    Sockets = 0,

    /// <summary>
    /// libuv event loops, one per processor by default, each owning its connections and its memory pool (needs the
    /// system's libuv 1.x, Debian package libuv1; starting without it fails with an error that names the package).
    /// </summary>
    Libuv = 1,

    /// <summary>
    /// io_uring rings, one per loop thread and one loop per processor by default, each owning its connections and its memory
    /// pool (needs Linux 6.1 or later with io_uring allowed; starting where it cannot run fails with an error that says why).
    /// </summary>
    IoUring = 2,
}
