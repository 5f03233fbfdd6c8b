using System;

namespace Falconet.Buffers;

/// <summary>Thrown when blocks of a <see cref="SlabMemoryPool"/> are still rented after the time a caller allowed for their return.</summary>
public sealed class PoolLeakException : Exception
{
    /// <summary>Creates the exception with the pool's leak report.</summary>
    public PoolLeakException(string poolName, long blocksOutstanding, string report)
        : base($"Pool '{poolName}' still has {blocksOutstanding} block(s) rented.{Environment.NewLine}{report}")
    {
        PoolName = poolName;
        BlocksOutstanding = blocksOutstanding;
        Report = report;
    }

    /// <summary>Name of the pool that leaked.</summary>
    public string PoolName { get; }

    /// <summary>Blocks still rented when the wait gave up.</summary>
    public long BlocksOutstanding { get; }

    /// <summary>Each outstanding block with the stack that rented it (when the pool tracks leaks).</summary>
    public string Report { get; }
}
