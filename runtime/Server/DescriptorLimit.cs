using System;
using System.IO;
using System.Runtime.InteropServices;

namespace Falconet.Server;

/// <summary>
/// The process's limit of open file descriptors (<c>RLIMIT_NOFILE</c>) and the default connection limit derived from it.
/// </summary>
/// <remarks>
/// Every connection holds a descriptor, and so does the runtime: starting a thread (the thread pool adds threads
/// under load), loading an assembly, reading <c>/proc</c>. At the limit those fail, and a thread that cannot start
/// ends the process ("Out of memory." and SIGABRT from a thread-pool thread, seen in a connection flood). So the
/// server never lets connections take the last descriptors: it keeps a reserve for the rest of the process.
/// </remarks>
internal static unsafe partial class DescriptorLimit
{
    /// <summary>The fewest descriptors kept in reserve, whatever the limit.</summary>
    public const int MinimumReserve = 64;

    /// <summary>The soft limit of open descriptors (.NET raises it to the hard limit at startup), or null where it cannot be read.</summary>
    public static long? SoftLimit()
    {
        int resource = OperatingSystem.IsLinux() ? 7 : OperatingSystem.IsMacOS() || OperatingSystem.IsFreeBSD() ? 8 : -1;
        if (resource < 0)
        {
            return null;
        }

        try
        {
            ResourceLimit limit;
            if (GetResourceLimit(resource, &limit) != 0)
            {
                return null;
            }

            // RLIM_INFINITY is the largest value: no limit worth deriving from.
            return limit.Current >= long.MaxValue ? null : (long)limit.Current;
        }
        catch (Exception exception) when (exception is DllNotFoundException or EntryPointNotFoundException)
        {
            return null;
        }
    }

    /// <summary>Descriptors the process has open now (Linux), or null where that cannot be counted.</summary>
    public static int? OpenNow()
    {
        if (!OperatingSystem.IsLinux() || !Directory.Exists("/proc/self/fd"))
        {
            return null;
        }

        // The listing holds a descriptor of its own while it runs.
        return Math.Max(0, Directory.GetFileSystemEntries("/proc/self/fd").Length - 1);
    }

    /// <summary>
    /// The default connection limit for a process allowed <paramref name="limit"/> descriptors with <paramref name="open"/>
    /// already open: what is left after a reserve of an eighth of the limit (at least <see cref="MinimumReserve"/>), and at
    /// least one connection.
    /// </summary>
    public static int DefaultMaxConnections(long limit, int open)
    {
        long reserve = Math.Max(MinimumReserve, limit / 8);
        long available = limit - open - reserve;
        return (int)Math.Clamp(available, 1, int.MaxValue);
    }

    /// <summary>The default connection limit of this process now, or <see cref="int.MaxValue"/> where the descriptor limit cannot be read.</summary>
    public static int DefaultMaxConnections() =>
        SoftLimit() is long limit ? DefaultMaxConnections(limit, OpenNow() ?? 0) : int.MaxValue;

    [LibraryImport("libc", EntryPoint = "getrlimit", SetLastError = true)]
    private static partial int GetResourceLimit(int resource, ResourceLimit* limit);

    [StructLayout(LayoutKind.Sequential)]
    private struct ResourceLimit
    {
        public ulong Current;
        public ulong Maximum;
    }
}
