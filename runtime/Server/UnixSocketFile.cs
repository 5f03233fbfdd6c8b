using System;
using System.IO;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace Falconet.Server;

/// <summary>
/// The file of a Unix domain socket endpoint: a stale one left by a process that ended without removing it is removed before
/// binding, a path that is not a socket (or a socket someone listens on) fails the start, and at stop the file is removed only
/// while it is still the one this server bound (a newer process may have taken the path over).
/// </summary>
internal sealed unsafe partial class UnixSocketFile
{
    private const int AtCurrentDirectory = -100;
    private const int AtSymlinkNoFollow = 0x100;
    private const uint StatxType = 0x1;
    private const uint StatxIno = 0x100;
    private const int TypeMask = 0xF000;
    private const int TypeSocket = 0xC000;

    private readonly string _path;
    private ulong _inode;

    private UnixSocketFile(string path)
    {
        _path = path;
    }

    /// <summary>The path of the socket file.</summary>
    public string Path => _path;

    /// <summary>
    /// Makes the path ready to bind: removes a socket file nobody listens on. Null for an abstract socket (no file).
    /// </summary>
    /// <exception cref="InvalidOperationException">The path is not a socket, or a process listens on it; the message names the path.</exception>
    public static UnixSocketFile? Prepare(UnixDomainSocketEndPoint endpoint)
    {
        string path = endpoint.ToString();
        if (path.Length == 0 || path[0] is '\0' or '@')
        {
            return null;
        }

        if (Stat(path, out int mode, out _))
        {
            if ((mode & TypeMask) != TypeSocket)
            {
                throw new InvalidOperationException($"The Unix socket path '{path}' exists and is not a socket; Falconet removes only a stale socket file. Remove it or choose another path.");
            }

            if (SomeoneListens(endpoint))
            {
                throw new InvalidOperationException($"Another process listens on the Unix socket '{path}'.");
            }

            // Left by a process that ended without removing it (a crash, a kill -9).
            File.Delete(path);
        }

        return new UnixSocketFile(path);
    }

    /// <summary>After the bind: sets <paramref name="permissions"/> (when given) and remembers which file this server made.</summary>
    public void Bound(UnixFileMode? permissions)
    {
        if (permissions is { } mode && !OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(_path, mode);
        }

        Stat(_path, out _, out _inode);
    }

    /// <summary>Removes the file, unless another one replaced it meanwhile.</summary>
    public void Remove()
    {
        try
        {
            if (Stat(_path, out int mode, out ulong inode) && (mode & TypeMask) == TypeSocket && inode == _inode)
            {
                File.Delete(_path);
            }
        }
        catch (IOException)
        {
            // Removed already, or the directory went away: nothing is left to clean.
        }
        catch (UnauthorizedAccessException)
        {
        }
    }

    private static bool SomeoneListens(UnixDomainSocketEndPoint endpoint)
    {
        using var probe = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            probe.Connect(endpoint);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    /// <summary>statx(2), whose layout is the same on every architecture: the file's type and mode, and its inode.</summary>
    private static bool Stat(string path, out int mode, out ulong inode)
    {
        byte* buffer = stackalloc byte[256];
        if (StatX(AtCurrentDirectory, path, AtSymlinkNoFollow, StatxType | StatxIno, buffer) != 0)
        {
            mode = 0;
            inode = 0;
            return false;
        }

        mode = *(ushort*)(buffer + 28);
        inode = *(ulong*)(buffer + 32);
        return true;
    }

    [LibraryImport("libc", EntryPoint = "statx", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int StatX(int directory, string path, int flags, uint mask, byte* buffer);
}
