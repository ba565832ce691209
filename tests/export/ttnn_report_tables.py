"""The tables of a TT-NN report database, as ttnn-visualizer reads them: name -> [(column, type)].

Kept here, independent of the exporter, to test the export against. Taken from ttnn's
`graph_report.py` / `database.py` (tenstorrent/tt-metal) and the `.schema` of a current report
recorded in ttnn-visualizer (`backend/ttnn_visualizer/tests/report_schemas.py`, SCHEMA_V2_1).
Where the two differ, the report's `.schema` wins, since that is what the visualizer reads:
`errors` has six columns (graph_report.py's importer declares four), and `stack_traces` has
`source_file_id` with its `source_files` table.
"""

INT, TEXT, FLOAT = "INT", "TEXT", "FLOAT"

REPORT_TABLES: dict[str, list[tuple[str, str]]] = {
    "devices": [(c, INT) for c in (
        "device_id", "num_y_cores", "num_x_cores", "num_y_compute_cores", "num_x_compute_cores",
        "worker_l1_size", "l1_num_banks", "l1_bank_size", "address_at_first_l1_bank",
        "address_at_first_l1_cb_buffer", "num_banks_per_storage_core", "num_compute_cores",
        "num_storage_cores", "total_l1_memory", "total_l1_for_tensors",
        "total_l1_for_interleaved_buffers", "total_l1_for_sharded_buffers", "cb_limit")],
    "operations": [("operation_id", INT), ("name", TEXT), ("duration", FLOAT)],
    "operation_arguments": [("operation_id", INT), ("name", TEXT), ("value", TEXT)],
    "tensors": [("tensor_id", INT), ("shape", TEXT), ("dtype", TEXT), ("layout", TEXT),
                ("memory_config", TEXT), ("device_id", INT), ("address", INT),
                ("buffer_type", INT)],
    "device_tensors": [("tensor_id", INT), ("device_id", INT), ("address", INT)],
    "buffers": [("operation_id", INT), ("device_id", INT), ("address", INT),
                ("max_size_per_bank", INT), ("buffer_type", INT), ("buffer_layout", INT)],
    "captured_graph": [("operation_id", INT), ("captured_graph", TEXT)],
    "nodes": [("operation_id", INT), ("unique_id", INT), ("node_operation_id", INT),
              ("name", TEXT)],
    "edges": [("operation_id", INT), ("source_unique_id", INT), ("sink_unique_id", INT),
              ("source_output_index", INT), ("sink_input_index", INT), ("key", INT)],
    "report_metadata": [("key", TEXT), ("value", TEXT)],
    "errors": [("operation_id", INT), ("operation_name", TEXT), ("error_type", TEXT),
               ("error_message", TEXT), ("stack_trace", TEXT), ("timestamp", TEXT)],
    "source_files": [("id", "INTEGER"), ("path", TEXT), ("contents", TEXT)],
    "stack_traces": [("operation_id", INT), ("stack_trace", TEXT), ("source_file_id", INT)],
    "input_tensors": [("operation_id", INT), ("input_index", INT), ("tensor_id", INT)],
    "output_tensors": [("operation_id", INT), ("output_index", INT), ("tensor_id", INT)],
    "local_tensor_comparison_records": [("tensor_id", INT), ("golden_tensor_id", INT),
                                        ("matches", INT), ("desired_pcc", FLOAT),
                                        ("actual_pcc", FLOAT)],
    "global_tensor_comparison_records": [("tensor_id", INT), ("golden_tensor_id", INT),
                                         ("matches", INT), ("desired_pcc", FLOAT),
                                         ("actual_pcc", FLOAT)],
    "buffer_pages": [("operation_id", INT), ("device_id", INT), ("address", INT),
                     ("core_y", INT), ("core_x", INT), ("bank_id", INT), ("page_index", INT),
                     ("page_address", INT), ("page_size", INT), ("buffer_type", INT)],
}  # fmt: skip
# Unique columns the visualizer relies on (INSERT ... ON CONFLICT, one row per id).
UNIQUE_COLUMNS = {"operations": "operation_id", "tensors": "tensor_id", "report_metadata": "key"}
