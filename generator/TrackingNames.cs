namespace Falconet.Generator;

/// <summary>Names of the incremental pipeline steps, used by tests to check caching.</summary>
public static class TrackingNames
{
    /// <summary>Each AdditionalFiles schema parsed into a located model.</summary>
    public const string Schema = nameof(Schema);

    /// <summary>MSBuild options (namespace, visibility).</summary>
    public const string Options = nameof(Options);

    /// <summary>Default and user schemas merged and validated.</summary>
    public const string Model = nameof(Model);

    /// <summary>Masks, buckets, bit indexes and blobs computed from the model.</summary>
    public const string Plan = nameof(Plan);

    /// <summary>Diagnostics of all schemas.</summary>
    public const string Diagnostics = nameof(Diagnostics);
}
